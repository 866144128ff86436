"""The process groups a local run started, recorded on disk, and the reaping of those whose run is gone.

Every bound group (a local container, a processing job) is recorded as
``<cache>/process-groups/<pgid>.json`` while it runs: its group, its leader's start time (a pid is
reused; a pid and start time are not), the process that owns it and that one's start time, the run
and the folder its results go to. The lifeline ends a group with its owner; a record whose owner is
gone while members of its group still run means that failed (the guardian itself was killed), and
the next local run or ``deploybench janitor --local`` kills that group and says so.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

FOLDER = "process-groups"

_run: dict[str, str] = {}


def registry() -> Path:
    """Where the records live: ``$DEPLOYBENCH_CACHE_DIR/process-groups`` or ``~/.cache/deploybench/...``."""
    from workflows.container.environment import cache_root

    return cache_root() / FOLDER


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else int(fields[19])


def members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of a process group."""
    from workflows.processes.guardian import group_members

    return group_members(pgid)


def set_run(run_id: str, results: Path) -> None:
    """Name the run whose groups this process starts from now on (the local engine, at start)."""
    _run.update(run_id=run_id, results=str(results))


def clear_run() -> None:
    _run.clear()


def record(pgid: int, *, what: str) -> Path:
    """Record a group this process just started (``what``: e.g. ``container minilm-...-ep/primary``)."""
    folder = registry()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{pgid}.json"
    body = {
        "pgid": pgid,
        "leader_start": start_time(pgid),
        "owner_pid": os.getpid(),
        "owner_start": start_time(os.getpid()),
        "what": what,
        "run_id": _run.get("run_id", ""),
        "results": _run.get("results", ""),
    }
    scratch = path.with_suffix(".tmp")
    scratch.write_text(json.dumps(body), encoding="utf-8")
    scratch.replace(path)
    return path


def forget(pgid: int) -> None:
    """The group ended (or was stopped) normally: drop its record."""
    with contextlib.suppress(FileNotFoundError):
        (registry() / f"{pgid}.json").unlink()


def owned() -> list[int]:
    """The recorded groups this process started that have not ended yet."""
    folder = registry()
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if body.get("owner_pid") == os.getpid() and body.get("owner_start") == start_time(os.getpid()):
            found.append(int(body["pgid"]))
    return found


def serving(endpoint: str) -> list[int]:
    """The live recorded groups of the local containers serving ``endpoint`` (none off the local engine).

    A group counts only while its leader is the process recorded (a pid and start time), so a
    reused group id is never read as the endpoint's.
    """
    folder = registry()
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
            pgid = int(body["pgid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        leader = start_time(pgid)
        ours = str(body.get("what", "")).startswith(f"container {endpoint}/")
        if ours and leader is not None and leader == body.get("leader_start"):
            found.append(pgid)
    return found


@dataclass(frozen=True)
class Reaped:
    """A recorded group whose owner was gone: what it was, and what the reaper found and did."""

    pgid: int
    what: str
    run_id: str
    results: str
    processes: list[int]
    """The group's processes that were still running (empty: the group had ended)."""
    dry_run: bool = False
    """Only listed: nothing was killed, no record removed."""

    def line(self) -> str:
        run = f" of run {self.run_id}" if self.run_id else ""
        pids = ", ".join(map(str, self.processes))
        if self.processes and self.dry_run:
            return f"process group {self.pgid} ({self.what}{run}) is left running: {len(self.processes)} process(es): {pids}"
        if self.processes:
            return (
                f"reaped process group {self.pgid} ({self.what}{run}): killed {len(self.processes)} "
                f"process(es) left running: {pids}"
            )
        return f"process group {self.pgid} ({self.what}{run}) had already ended; its record is removed"


def _owner_alive(body: dict[str, object]) -> bool:
    pid, started = body.get("owner_pid"), body.get("owner_start")
    return isinstance(pid, int) and start_time(pid) is not None and start_time(pid) == started


def _kill(pgid: int, deadline_s: float = 5.0) -> list[int]:
    found = members(pgid)
    if not found:
        return []
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    deadline = time.monotonic() + deadline_s
    while members(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def reap(*, dry_run: bool = False) -> list[Reaped]:
    """Kill every recorded group whose owner is gone, drop its record, and say what was found.

    A record whose leader's start time no longer matches names a reused group id: nothing of the
    run is left there, and nothing is killed. ``dry_run`` lists without killing or removing.
    """
    folder = registry()
    if not folder.is_dir():
        return []
    reaped = []
    for path in sorted(folder.glob("*.json")):
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
            pgid = int(body["pgid"])
        except (OSError, ValueError, KeyError, TypeError):
            if not dry_run:
                path.unlink(missing_ok=True)
            continue
        if _owner_alive(body):
            continue
        leader = start_time(pgid)
        # A leader gone with members left (the guardian killed alone) is still the run's group; a
        # live leader of another start time is a new group under a reused id.
        running = members(pgid) if leader is None or leader == body.get("leader_start") else []
        if running and not dry_run:
            running = _kill(pgid)
        reaped.append(
            Reaped(
                pgid=pgid,
                what=str(body.get("what", "")),
                run_id=str(body.get("run_id", "")),
                results=str(body.get("results", "")),
                processes=running,
                dry_run=dry_run,
            )
        )
        if not dry_run:
            path.unlink(missing_ok=True)
    return reaped
