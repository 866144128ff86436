"""A local run stopped by a signal leaves nothing behind: SIGINT, SIGTERM and SIGKILL, state by state.

Each test runs ``deploybench run --local`` as a user does (a process of its own, the light server,
the tiny model), interrupts it when a state is entered, and checks: no process of the run is left,
no partial conversion cache entry is visible, ``result.json`` (where written) says INTERRUPTED with
that state, and the next run succeeds (no port or lock left taken). After SIGKILL, which cannot be
handled, the lifeline ends the run's process groups and ``janitor --local`` reports their records.

Two representative cases run with ``make test``; the full states x signals matrix is marked
``matrix`` (``make test-matrix``).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest
import yaml

from tests.conftest import ROOT, fast_spec
from tests.support.local_pipeline import HAPPY_PATH

MARKER = "DEPLOYBENCH_INTERRUPT_TEST"
EXIT_CODES: dict[int, int] = {
    signal.SIGINT: 130,
    signal.SIGTERM: 143,
    signal.SIGHUP: 129,
    signal.SIGKILL: -signal.SIGKILL,
}
STATES = [
    "ConvertToOnnx",
    "PackArtifact",
    "DeployEndpoint",
    "WaitForEndpoint",
    "WarmUpShapes",
    "RunBenchmark",
    "TeardownEndpoint",
]


@pytest.fixture
def spec_file(tiny_bert: Path, tmp_path: Path) -> Path:
    """The run to interrupt: its benchmark measures for seconds, so a signal sent as RunBenchmark is
    entered lands in it (the next run's spec, ``next_spec``, measures briefly)."""
    path = tmp_path / "spec.yaml"
    spec = fast_spec(tiny_bert, name="interrupted", benchmark={"min_duration_s": 4.0, "max_duration_s": 6.0})
    path.write_text(yaml.safe_dump(spec.model_dump(mode="json", exclude_none=True)), encoding="utf-8")
    return path


def _next_spec(spec: Path) -> Path:
    path = spec.with_name("next.yaml")
    data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    data["benchmark"].update(min_duration_s=0.3, max_duration_s=1.5)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _environment(tmp_path: Path, marker: str) -> dict[str, str]:
    return {
        **os.environ,
        MARKER: marker,
        "PYTHONPATH": str(ROOT),
        "DEPLOYBENCH_LOCAL_SERVER": "light",
        "DEPLOYBENCH_CONVERSION_CACHE": str(tmp_path / "conversions"),
    }


def _command(spec: Path, results: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "workflows.cli", "run", str(spec), "--local", "--results-dir", str(results),
            "--time-scale", "200", *extra]  # fmt: skip


def _of_run(marker: str) -> list[psutil.Process]:
    """Every live process started for this run (the marker is in each one's environment)."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.status() != psutil.STATUS_ZOMBIE and process.environ().get(MARKER) == marker:
                found.append(process)
        except psutil.Error:
            continue
    return found


def _interrupt_in(spec: Path, results: Path, env: dict[str, str], state: str, signum: int) -> tuple[int, str]:
    """Run until ``state`` is entered, send ``signum``, and return the exit status and the output."""
    process = subprocess.Popen(
        _command(spec, results),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert process.stdout is not None
    lines: list[str] = []
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            if not selector.select(timeout=1.0):
                continue
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line)
            if f"▶ {state}" in line:
                process.send_signal(signum)
                break
        else:
            raise AssertionError(f"{state} was not entered within 300 s:\n{''.join(lines)[-3000:]}")
        code = process.wait(timeout=120)
        lines.append(process.stdout.read())
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    output = "".join(lines)
    assert f"▶ {state}" in output, output[-3000:]
    return code, output


def _nothing_left(marker: str, deadline_s: float = 15.0) -> list[psutil.Process]:
    deadline = time.monotonic() + deadline_s
    while (left := _of_run(marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def _no_partial_cache_entry(tmp_path: Path) -> None:
    root = tmp_path / "conversions"
    visible = [p for p in root.iterdir() if not p.name.startswith(".")] if root.is_dir() else []
    for entry in visible:
        if entry.is_dir() and entry.name != "locks":
            assert (entry / "inputs.json").is_file(), f"partial cache entry {entry}"


def check_interrupted(spec: Path, tmp_path: Path, state: str, signum: int) -> None:
    # Given a local run, When it is sent the signal as it enters the state
    marker = uuid.uuid4().hex
    env = _environment(tmp_path, marker)
    code, output = _interrupt_in(spec, tmp_path / "results", env, state, signum)
    # Then it exits as the signal says
    assert code == EXIT_CODES[signum], output[-3000:]
    # And no process of the run is left (after SIGKILL: the lifeline ends them, within seconds)
    assert _nothing_left(marker) == [], output[-3000:]
    # And no conversion cache entry is partial
    _no_partial_cache_entry(tmp_path)
    [run] = list((tmp_path / "results").iterdir())
    if signum == signal.SIGKILL:
        # And the janitor reports what the killed run's records held, and kills nothing more
        janitor = subprocess.run(
            [sys.executable, "-m", "workflows.cli", "janitor", "--local", "--json"],
            capture_output=True, text=True, env=env, cwd=ROOT, timeout=60,
        )  # fmt: skip
        assert janitor.returncode == 0, janitor.stderr
        report = json.loads(janitor.stdout)
        mine = [g for g in report["groups"] if g["run_id"] == run.name]
        assert all(g["processes"] == [] for g in mine), report
        # Records are there when a container had started and the teardown had not ended it before the
        # kill landed: before DeployEndpoint nothing is recorded (the conversion child is bound by its
        # lifeline, not recorded), and a teardown that finished first forgot its container's record.
        engine = run / "engine"
        started = (engine / "endpoint-logs").is_dir() and any((engine / "endpoint-logs").iterdir())
        torn_down = (engine / "lambda.log").is_file() and '"torn down"' in (engine / "lambda.log").read_text()
        if started and not torn_down:
            assert mine, report
    else:
        # And it said in one line what it tore down and where the results are
        [line] = [line for line in output.splitlines() if line.startswith("Interrupted by")]
        assert signal.Signals(signum).name in line and str(run) in line, line
        # And result.json says INTERRUPTED, in that state, never complete
        result = json.loads((run / "result.json").read_text())
        assert result["status"] == "INTERRUPTED" and result["interrupted"]["complete"] is False
        # (a short state may be over before the signal lands: then a later one is named, never an earlier)
        stopped_in = result["interrupted"]["state"]
        assert stopped_in in HAPPY_PATH[HAPPY_PATH.index(state) :], stopped_in
        if HAPPY_PATH.index(stopped_in) <= HAPPY_PATH.index("RunBenchmark"):
            # Stopped before or in the measurement: no figures. One that finished before the signal
            # landed (a loaded host) leaves its complete figures, and the run names a later state.
            assert result["measurements"] == []
    # And the next run succeeds: no port, lock or leftover in its way
    marker = uuid.uuid4().hex
    completed = subprocess.run(
        _command(_next_spec(spec), tmp_path / "next"), capture_output=True, text=True, env=_environment(tmp_path, marker),
        cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert _nothing_left(marker) == []


@pytest.mark.e2e
def test_sigterm_during_the_benchmark_tears_down_and_the_next_run_succeeds(
    spec_file: Path, tmp_path: Path
) -> None:
    check_interrupted(spec_file, tmp_path, "RunBenchmark", signal.SIGTERM)


@pytest.mark.e2e
def test_sigkill_during_warm_up_leaves_nothing_and_the_next_run_succeeds(
    spec_file: Path, tmp_path: Path
) -> None:
    check_interrupted(spec_file, tmp_path, "WarmUpShapes", signal.SIGKILL)


@pytest.mark.matrix
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
@pytest.mark.parametrize("state", STATES)
def test_every_state_and_signal_leaves_nothing(
    spec_file: Path, tmp_path: Path, state: str, signum: int
) -> None:
    check_interrupted(spec_file, tmp_path, state, signum)
