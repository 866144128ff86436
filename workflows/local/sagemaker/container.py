"""One local serving container: unpack model.tar.gz, start the server process, proxy invocations.

The process starts in its own session and is stopped by killing its process group, so nothing
it spawned outlives the endpoint.
"""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path
from typing import Any

LIGHT_SERVER = Path(__file__).with_name("light_server.py")


class ContainerFailed(Exception):
    """The container did not become healthy; the message is the endpoint's FailureReason."""


class Container:
    def __init__(self, *, name: str, workdir: Path, environment: dict[str, str], log_path: Path) -> None:
        self.name = name
        self.workdir = workdir
        self.environment = environment
        self.model_dir = workdir / "model"
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self.port: int | None = None
        self._local = threading.local()
        self.server_kind = "light"

    def unpack(self, tarball: Path) -> None:
        self.model_dir.mkdir(parents=True, exist_ok=True)
        # "r:*" reads gzip and plain tar alike (SageMaker accepts both).
        with tarfile.open(tarball, "r:*") as archive:
            archive.extractall(self.model_dir, filter="data")

    def start(self, *, health_timeout_s: float) -> None:
        """Start the server and wait for a healthy ``/ping``.

        Raises:
            ContainerFailed: the process exited or did not answer within the timeout.
        """
        port_file = self.workdir / "port"
        env = {**os.environ, **self.environment, "SAGEMAKER_BASE_DIR": str(self.workdir)}
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    str(LIGHT_SERVER),
                    "--model-dir",
                    str(self.model_dir),
                    "--port-file",
                    str(port_file),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.workdir,
                start_new_session=True,
            )
        deadline = time.monotonic() + health_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ContainerFailed(
                    "The primary container for production variant primary did not pass the ping health check. "
                    "Please check CloudWatch logs for this endpoint."
                )
            if port_file.exists() and self._ping(int(port_file.read_text())):
                self.port = int(port_file.read_text())
                return
            time.sleep(0.1)
        self.stop()
        raise ContainerFailed(
            "The primary container for production variant primary did not pass the ping health check. "
            "Please check CloudWatch logs for this endpoint."
        )

    def _ping(self, port: int) -> bool:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/ping")
            return connection.getresponse().status == 200
        except OSError:
            return False

    def _connection(self) -> http.client.HTTPConnection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
            self._local.connection = connection
        return connection

    def invoke(self, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, str]:
        """POST /invocations over a kept-alive connection (one per calling thread)."""
        for attempt in range(2):
            connection = self._connection()
            try:
                connection.request("POST", "/invocations", body=body, headers=headers)
                response = connection.getresponse()
                return (
                    response.status,
                    response.read(),
                    response.getheader("Content-Type", "application/json"),
                )
            except (http.client.HTTPException, ConnectionError):
                connection.close()
                self._local.connection = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """Kill the server's whole process group and reap it."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)
        except ProcessLookupError:
            pass

    def describe(self) -> dict[str, Any]:
        return {
            "pid": self.process.pid if self.process else None,
            "port": self.port,
            "server": self.server_kind,
        }
