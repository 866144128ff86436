"""Container logs into CloudWatch Logs, where SageMaker puts them: /aws/sagemaker/Endpoints/<name>.

Each container's output stays in its file under the engine's work dir; a shipper thread tails the
files and sends new lines as log events to the log stream of their variant and instance, like
``AllTraffic/i-0123456789abcdef0``, so diagnosis reads them with an ordinary ``logs`` client.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types_boto3_logs import CloudWatchLogsClient
    from types_boto3_logs.type_defs import InputLogEventTypeDef

ENDPOINT_LOG_GROUP = "/aws/sagemaker/Endpoints/{name}"
PROCESSING_LOG_GROUP = "/aws/sagemaker/ProcessingJobs"
# PutLogEvents takes at most 10,000 events and 1 MiB per call.
MAX_EVENTS = 5000
SHIP_INTERVAL_S = 0.5


def instance_id(*parts: str) -> str:
    """A stable EC2-style instance id for a local "instance" (``i-`` and 17 hex digits)."""
    return "i-" + hashlib.sha256("/".join(parts).encode()).hexdigest()[:17]


class _Followed:
    def __init__(self, path: Path, group: str, stream: str) -> None:
        self.path = path
        self.group = group
        self.stream = stream
        self.offset = 0
        self.partial = b""


class LogShipper:
    """Tails container log files into CloudWatch Logs from one background thread."""

    def __init__(self, logs: CloudWatchLogsClient) -> None:
        self.logs = logs
        self._followed: dict[Path, _Followed] = {}
        self._lock = threading.Lock()
        self._known: set[tuple[str, str]] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="log-shipper", daemon=True)
        self._thread.start()

    def follow(self, path: Path, *, group: str, stream: str) -> None:
        """Ship the lines appended to ``path`` to ``group``/``stream`` (from the start of the file)."""
        with self._lock:
            self._followed[path] = _Followed(path, group, stream)

    def unfollow(self, path: Path) -> None:
        """Ship what is left in ``path``, then stop following it."""
        with self._lock:
            followed = self._followed.pop(path, None)
        if followed is not None:
            self._ship(followed, final=True)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        with self._lock:
            remaining = list(self._followed.values())
            self._followed.clear()
        for followed in remaining:
            self._ship(followed, final=True)

    def _run(self) -> None:
        while not self._stop.wait(SHIP_INTERVAL_S):
            with self._lock:
                current = list(self._followed.values())
            for followed in current:
                self._ship(followed)

    def _ensure(self, group: str, stream: str) -> None:
        if (group, stream) in self._known:
            return
        with contextlib.suppress(self.logs.exceptions.ResourceAlreadyExistsException):
            self.logs.create_log_group(logGroupName=group)
        with contextlib.suppress(self.logs.exceptions.ResourceAlreadyExistsException):
            self.logs.create_log_stream(logGroupName=group, logStreamName=stream)
        self._known.add((group, stream))

    def _ship(self, followed: _Followed, *, final: bool = False) -> None:
        try:
            with followed.path.open("rb") as handle:
                handle.seek(followed.offset)
                data = handle.read()
        except OSError:
            return
        followed.offset += len(data)
        data = followed.partial + data
        lines = data.split(b"\n")
        followed.partial = b"" if final else lines.pop()
        # Real time, not the engine's simulated clock: CloudWatch rejects events far in the future.
        now = int(time.time() * 1000)
        events: list[InputLogEventTypeDef] = [
            {"timestamp": now, "message": line.decode("utf-8", "replace")} for line in lines if line.strip()
        ]
        if events:
            # Best effort, as the CloudWatch agent is: serving goes on, and the lines stay in the file.
            self.put_events(followed.group, followed.stream, events)

    def put_events(self, group: str, stream: str, events: list[InputLogEventTypeDef]) -> bool:
        """Send ``events`` to ``group``/``stream`` (created when new); False when CloudWatch Logs refused.

        Best effort for every writer (container output, request traces): a failed write never fails serving.
        """
        try:
            self._ensure(group, stream)
            for start in range(0, len(events), MAX_EVENTS):
                self.logs.put_log_events(
                    logGroupName=group, logStreamName=stream, logEvents=events[start : start + MAX_EVENTS]
                )
        except Exception:  # noqa: BLE001
            return False
        return True
