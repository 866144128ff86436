"""Shared by the remediation path tests: the ordered states around a remediation and what is left."""

from __future__ import annotations

from typing import Any

from tests.support.local_pipeline import AFTER_IN_SERVICE, BEFORE_DEPLOY, POLLING_LOOP
from workflows.local.engine import LocalEngine

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
