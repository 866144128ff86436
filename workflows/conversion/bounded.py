"""Run one graph pass in a child process bounded in time and memory (F34).

In the field an unbounded BERT fusion pass on DeBERTa ran 19 minutes at 27 GB with no output;
here the BERT pass needed 7-9x the model size in memory (8 GB for mDeBERTa-base, 10.4 GB for an
XLM-R of the same size) and crashed with SIGSEGV or MemoryError under an 8 GiB cap. A pass that
runs past its bound must cost a warning and the unoptimised graph, never the convert step (a
10 GB, 15-minute Lambda) itself, so each pass runs in a child with ``RLIMIT_AS`` set and a
deadline, and the parent samples its resident memory to report the peak.

Usage (by ``run_bounded`` only): python -m workflows.conversion.bounded REQUEST.json
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import workflows
from workflows.processes import lifeline

# task name -> "module:function"; the function takes the JSON arguments and returns a JSON object.
TASKS = {
    "fuse": "workflows.conversion.optimize:fuse_graph",
    "quantize": "workflows.conversion.quantize:quantize_graph",
    "quantize_static": "workflows.conversion.quantize_static:quantize_static_graph",
    "fp16": "workflows.gpu.fp16:fp16_graph",
}
SAMPLE_S = 0.1
# How running out of address space shows in a child: Python, C++, and the dynamic loader.
OUT_OF_MEMORY = ("MemoryError", "bad_alloc", "failed to map segment", "Cannot allocate memory")
PACKAGE_ROOT = Path(workflows.__file__).resolve().parents[1]


@dataclass
class BoundedOutcome:
    """What a bounded pass did: its result when it finished, otherwise why not."""

    ok: bool
    result: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    seconds: float = 0.0
    peak_rss_mb: int | None = None


def _child_environment() -> dict[str, str]:
    env = dict(os.environ)
    # The child must import this checkout's code, not another install of the package.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_ROOT), env.get("PYTHONPATH", "")) if p)
    # Each BLAS/OpenMP thread reserves address space that RLIMIT_AS counts; the passes are single-threaded.
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = "1"
    return env


def _failure_reason(returncode: int, stderr: str, *, memory_gib: float, peak_mb: int | None) -> str:
    peak = f", peak resident memory {peak_mb} MB" if peak_mb is not None else ""
    if returncode < 0:
        name = signal.Signals(-returncode).name
        return f"died with {name} under its {memory_gib:g} GiB memory bound{peak}"
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    last = lines[-1] if lines else f"exit status {returncode}"
    if any(sign in stderr for sign in OUT_OF_MEMORY):
        return f"ran out of its {memory_gib:g} GiB memory bound ({last[:300]}){peak}"
    return f"failed: {last[:500]}"


def _rss_mb(pid: int) -> int | None:
    """Resident memory of ``pid`` from /proc (the convert image has no psutil; Lambda is Linux)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    line = next((line for line in status.splitlines() if line.startswith("VmRSS:")), None)
    return int(line.split()[1]) // 1024 if line else None


class BoundedRun:
    """One pass started in a child process; a watcher thread enforces its deadline and samples memory.

    Start it, do other work (the child runs in parallel), then ``wait()``. As a context manager
    it kills a child still running when the block is left early (an error in the parent).
    """

    def __init__(self, task: str, arguments: dict[str, Any], *, timeout_s: float, memory_gib: float) -> None:
        self.timeout_s, self.memory_gib = timeout_s, memory_gib
        self.started = time.monotonic()
        self.peak_mb: int | None = None
        self.timed_out = False
        self._folder = tempfile.TemporaryDirectory(prefix="bounded-")
        folder = Path(self._folder.name)
        self._result, self._log = folder / "result.json", folder / "stderr.txt"
        request = folder / "request.json"
        request.write_text(
            json.dumps(
                {
                    "task": task,
                    "arguments": arguments,
                    "memory_bytes": int(memory_gib * 2**30),
                    "result": str(self._result),
                }
            ),
            encoding="utf-8",
        )
        # The pass ends with this process, even on SIGKILL (it watches the lifeline itself: its
        # parent reads its memory and its exit signal, which a guardian process in between would hide).
        env, lifeline_fds = lifeline.child_environment(_child_environment())
        with self._log.open("w", encoding="utf-8") as errors:
            self._child = subprocess.Popen(
                [sys.executable, "-m", "workflows.conversion.bounded", str(request)],
                stdout=errors,
                stderr=errors,
                env=env,
                start_new_session=True,
                pass_fds=lifeline_fds,
            )
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    def _watch(self) -> None:
        while self._child.poll() is None:
            rss = _rss_mb(self._child.pid)
            if rss is not None:
                self.peak_mb = max(self.peak_mb or 0, rss)
            if time.monotonic() - self.started > self.timeout_s:
                self.timed_out = True
                self.kill()
                return
            time.sleep(SAMPLE_S)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._child.pid, signal.SIGKILL)
        self._child.wait()

    def wait(self) -> BoundedOutcome:
        """Block until the child ends (or is killed at its deadline); never raises for its failure."""
        self._watcher.join()
        self._child.wait()
        seconds = round(time.monotonic() - self.started, 1)
        try:
            if self.timed_out:
                reason = f"ran past its {self.timeout_s:g} s time bound and was stopped"
                return BoundedOutcome(False, reason=reason, seconds=seconds, peak_rss_mb=self.peak_mb)
            if self._child.returncode != 0 or not self._result.is_file():
                stderr = self._log.read_text(encoding="utf-8", errors="replace")
                reason = _failure_reason(
                    self._child.returncode, stderr, memory_gib=self.memory_gib, peak_mb=self.peak_mb
                )
                return BoundedOutcome(False, reason=reason, seconds=seconds, peak_rss_mb=self.peak_mb)
            result = json.loads(self._result.read_text(encoding="utf-8"))
            return BoundedOutcome(True, result=result, seconds=seconds, peak_rss_mb=self.peak_mb)
        finally:
            self._folder.cleanup()

    def __enter__(self) -> BoundedRun:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._child.poll() is None:
            self.kill()
        self._watcher.join()
        self._folder.cleanup()


def run_bounded(
    task: str, arguments: dict[str, Any], *, timeout_s: float, memory_gib: float
) -> BoundedOutcome:
    """Run ``TASKS[task](**arguments)`` in a child process with a deadline and an address-space cap.

    Args:
        task: a key of ``TASKS``.
        arguments: JSON-serialisable keyword arguments of the task function.
        timeout_s: wall-clock bound; the child is killed when it is exceeded.
        memory_gib: ``RLIMIT_AS`` of the child (address space, which is at least its resident memory).

    Returns:
        The outcome; never raises for a failed, crashed or killed pass.
    """
    with BoundedRun(task, arguments, timeout_s=timeout_s, memory_gib=memory_gib) as run:
        return run.wait()


def main(argv: list[str]) -> int:
    lifeline.watch_from_environment()
    request = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    limit = int(request["memory_bytes"])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    module_name, function_name = TASKS[request["task"]].split(":")
    function = getattr(importlib.import_module(module_name), function_name)
    outcome = function(**request["arguments"])
    Path(request["result"]).write_text(json.dumps(outcome), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
