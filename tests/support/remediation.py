"""Shared by the remediation path tests: the ordered states around a remediation and what is left."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.local_pipeline import AFTER_IN_SERVICE, BEFORE_DEPLOY, POLLING_LOOP, results, run
from workflows.contracts import PipelineState
from workflows.execution.pipeline import ExecutionOutcome
from workflows.local.engine import LocalEngine
from workflows.local.faults import FaultPlan

WAIT_LOOP = ["(wait loop)"]

REDEPLOYED_ONCE = [
    *BEFORE_DEPLOY,
    "DeployEndpoint",
    *WAIT_LOOP,
    "DiagnoseFailure",
    "PlanRemediation",
    "ChooseRemediation",
    "RemoveFailedAttempt",
    "DeployEndpoint",
    *WAIT_LOOP,
    *AFTER_IN_SERVICE,
]
"""A run whose first endpoint failed: diagnosed, removed, deployed again and measured (as
:func:`collapse` folds its polling)."""


def collapse(states: list[str]) -> list[str]:
    """Ordered states with each run of the polling loop as one "(wait loop)": how many polls a
    failing endpoint takes before it leaves Creating depends on the machine's speed."""
    out: list[str] = []
    for state in states:
        name = WAIT_LOOP[0] if state in POLLING_LOOP else state
        if not (out and out[-1] == name == WAIT_LOOP[0]):
            out.append(name)
    return out


def nothing_left(engine: LocalEngine) -> dict[str, Any]:
    """What the local SageMaker still holds once the run is over (read before the engine stops)."""
    assert engine.sagemaker is not None
    return {
        "endpoints": sorted(engine.sagemaker.endpoints),
        "configs": sorted(engine.sagemaker.configs),
        "models": sorted(engine.sagemaker.models),
        "running": engine.sagemaker.running_containers(),
    }


EMPTY = {"endpoints": [], "configs": [], "models": [], "running": []}


@dataclass(frozen=True)
class Finished:
    """A deploy pipeline run on a fresh local engine: what the tests assert on."""

    outcome: ExecutionOutcome
    result: dict[str, Any]
    """The run's result.json."""
    left: dict[str, Any]
    """:func:`nothing_left`, read before the engine stopped."""
    leaked: list[str]
    """The endpoints the engine found still running when it stopped."""
    log: str
    """The endpoint logs whose file names start with ``log_of``, joined; empty without one."""


def run_to_the_end(
    state: PipelineState,
    tmp_path: Path,
    *,
    time_scale: float,
    fault_plan: FaultPlan | None = None,
    log_of: str | None = None,
) -> Finished:
    """Run the deploy pipeline for ``state`` on an engine in ``tmp_path/engine`` until it ends."""
    with LocalEngine(workdir=tmp_path / "engine", time_scale=time_scale, fault_plan=fault_plan) as engine:
        outcome = run(engine, state)
        result = results(engine, state.run_id, tmp_path)
        left = nothing_left(engine)
        logs = sorted((tmp_path / "engine" / "endpoint-logs").glob(f"{log_of}*.log")) if log_of else []
        log = "".join(p.read_text() for p in logs)
    return Finished(outcome, result, left, list(engine.leaked_endpoints), log)
