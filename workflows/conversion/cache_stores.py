"""Where conversion cache entries live: a local folder (``<root>/<key>/artifact`` plus ``inputs.json``,
each entry appearing by an atomic rename) or an S3 prefix (``conversions/<key>/...``, ``inputs.json``
written last, so a half-uploaded entry is no entry); one converter per key at a time in either.

What an entry's key is, and when an entry is served, stored or pruned: ``workflows/conversion/cache.py``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from botocore.exceptions import ClientError

from workflows.aws.clients import is_not_found, paginate, split_s3_uri, translate
from workflows.aws.storage import delete_prefix, download_folder, get_text, put_text, upload_folder
from workflows.errors import DeployRejected
from workflows.settings import Settings

INPUTS_FILE = "inputs.json"
CONVERTING_FILE = ".converting"
# A convert Lambda runs at most 15 minutes: a marker older than that belongs to no live conversion.
CLAIM_STALE_S = 900.0
CLAIM_WAIT_S = 600.0
CLAIM_POLL_S = 5.0
ARTIFACT_FOLDER = "artifact"


@dataclass(frozen=True)
class Entry:
    key: str
    size_bytes: int
    last_used: float


class Store(Protocol):
    location: str

    def where(self, key: str) -> str: ...
    def claim(self, key: str) -> contextlib.AbstractContextManager[None]: ...
    def fetch(self, key: str, target: Path) -> bool: ...
    def put(self, key: str, artifact: Path, inputs: dict[str, Any]) -> None: ...
    def entries(self) -> list[Entry]: ...
    def remove(self, key: str) -> None: ...


def _folder_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


PARTIAL = re.compile(r"^\.(?P<key>.+)\.partial-(?P<pid>\d+)$")


def _alive(pid: int) -> bool:
    """Whether a process with this id runs (one of another user counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LocalStore:
    """Entries as folders under ``root``; each appears by an atomic rename, complete or not at all."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.location = str(root)

    def where(self, key: str) -> str:
        return str(self.root / key)

    @contextlib.contextmanager
    def claim(self, key: str) -> Iterator[None]:
        """One converter per key at a time: a sweep's parallel members wait for the first one's
        entry instead of each converting (flock: also between threads of one process)."""
        locks = self.root / ".locks"
        locks.mkdir(parents=True, exist_ok=True)
        with (locks / f"{key}.lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def fetch(self, key: str, target: Path) -> bool:
        entry = self.root / key
        if not (entry / INPUTS_FILE).is_file():
            return False
        shutil.copytree(entry / ARTIFACT_FOLDER, target, dirs_exist_ok=True)
        os.utime(entry / INPUTS_FILE)  # last use: the age bound counts from here
        return True

    def reap_partials(self, *, dry_run: bool = False) -> list[str]:
        """The half-written entries of stores whose process died (SIGKILL, out of memory), removed.

        A store writes ``.<key>.partial-<pid>`` and renames it into place: such a folder is never an
        entry and never served, but one whose process is gone would stay forever.
        """
        if not self.root.is_dir():
            return []
        dead = [
            folder
            for folder in self.root.iterdir()
            if (found := PARTIAL.match(folder.name)) and not _alive(int(found.group("pid")))
        ]
        if not dry_run:
            for folder in dead:
                shutil.rmtree(folder, ignore_errors=True)
        return sorted(folder.name for folder in dead)

    def put(self, key: str, artifact: Path, inputs: dict[str, Any]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.reap_partials()
        partial = self.root / f".{key}.partial-{os.getpid()}"
        shutil.rmtree(partial, ignore_errors=True)
        try:
            shutil.copytree(artifact, partial / ARTIFACT_FOLDER)
            (partial / INPUTS_FILE).write_text(json.dumps(inputs, indent=2, sort_keys=True), encoding="utf-8")
            # Refused when another run stored the same key first: same inputs, same artifact.
            with contextlib.suppress(OSError):
                os.replace(partial, self.root / key)
        finally:
            shutil.rmtree(partial, ignore_errors=True)

    def entries(self) -> list[Entry]:
        if not self.root.is_dir():
            return []
        found = []
        for folder in self.root.iterdir():
            marker = folder / INPUTS_FILE
            if folder.name.startswith(".") or not marker.is_file():
                continue
            found.append(Entry(folder.name, _folder_bytes(folder), marker.stat().st_mtime))
        return found

    def remove(self, key: str) -> None:
        shutil.rmtree(self.root / key, ignore_errors=True)


class S3Store:
    """Entries under an S3 prefix; ``inputs.json`` goes up last and marks an entry complete."""

    def __init__(self, s3: Any, uri: str) -> None:
        self.s3 = s3
        self.location = uri.rstrip("/") + "/"

    def where(self, key: str) -> str:
        return f"{self.location}{key}/"

    def _modified(self, uri: str) -> float | None:
        bucket, key = split_s3_uri(uri)
        try:
            return float(self.s3.head_object(Bucket=bucket, Key=key)["LastModified"].timestamp())
        except ClientError as error:
            if is_not_found(error):
                return None
            raise translate(error, f"read {uri}") from error

    @contextlib.contextmanager
    def claim(self, key: str) -> Iterator[None]:
        """While one run converts a key it holds a ``.converting`` marker; another run with the same
        key (a sweep's parallel member) waits for the entry, up to ``CLAIM_WAIT_S``, and converts
        itself only when the marker is stale or the wait runs out (duplicate work, never a wrong
        artifact)."""
        done, marker = f"{self.where(key)}{INPUTS_FILE}", f"{self.where(key)}{CONVERTING_FILE}"
        deadline = time.monotonic() + CLAIM_WAIT_S
        while self._modified(done) is None and time.monotonic() < deadline:
            started = self._modified(marker)
            if started is None or time.time() - started > CLAIM_STALE_S:
                break
            time.sleep(CLAIM_POLL_S)
        if self._modified(done) is not None:
            yield
            return
        put_text(self.s3, marker, datetime.now(UTC).isoformat(), "text/plain")
        try:
            yield
        finally:
            delete_prefix(self.s3, marker)

    def fetch(self, key: str, target: Path) -> bool:
        marker = f"{self.where(key)}{INPUTS_FILE}"
        try:
            inputs = get_text(self.s3, marker)
        except DeployRejected as error:  # NoSuchKey: no entry for this key
            if isinstance(error.__cause__, ClientError) and is_not_found(error.__cause__):
                return False
            raise
        download_folder(self.s3, f"{self.where(key)}{ARTIFACT_FOLDER}/", target)
        # Re-written on use: its LastModified is the entry's last use for the age bound.
        put_text(self.s3, marker, inputs, "application/json")
        return True

    def put(self, key: str, artifact: Path, inputs: dict[str, Any]) -> None:
        upload_folder(self.s3, artifact, f"{self.where(key)}{ARTIFACT_FOLDER}/")
        put_text(
            self.s3,
            f"{self.where(key)}{INPUTS_FILE}",
            json.dumps(inputs, indent=2, sort_keys=True),
            "application/json",
        )

    def entries(self) -> list[Entry]:
        bucket, prefix = split_s3_uri(self.location)
        sizes: dict[str, int] = {}
        used: dict[str, float] = {}
        for item in paginate(self.s3, "list_objects_v2", "Contents", Bucket=bucket, Prefix=prefix):
            key, _, rest = item["Key"][len(prefix) :].partition("/")
            sizes[key] = sizes.get(key, 0) + int(item["Size"])
            if rest == INPUTS_FILE:
                used[key] = item["LastModified"].timestamp()
        return [Entry(key, sizes[key], used[key]) for key in sizes if key in used]

    def remove(self, key: str) -> None:
        delete_prefix(self.s3, self.where(key))


def open_store(settings: Settings, *, s3: Any) -> Store | None:
    """The store ``settings.conversion_cache`` names, or None when the cache is off."""
    location = settings.conversion_cache
    if not location:
        return None
    if location.startswith("s3://"):
        return S3Store(s3, location)
    return LocalStore(Path(location).expanduser())
