"""Shared by the remediation path tests: the ordered states around a remediation and what is left."""

from __future__ import annotations

from typing import Any

from tests.support.local_pipeline import POLLING_LOOP
from workflows.local.engine import LocalEngine

BEFORE_DEPLOY = ["CheckSpec", "ConvertToOnnx", "PackArtifact", "RunPreflight"]


WAIT_LOOP = ["(wait loop)"]


AFTER_IN_SERVICE = [
    "WarmUpShapes",
    "PlanBenchmark",
    "ChooseBenchmarkRunner",
    "RunBenchmark",
    "TeardownEndpoint",
    "WriteReport",
    "PipelineSucceeded",
]


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
