"""Shared by the local-engine path tests: run the deploy pipeline, read its result, fold its polling loop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workflows.contracts import PipelineState
from workflows.execution.pipeline import ExecutionOutcome, follow
from workflows.local.engine import LocalEngine

TIME_SCALE = 200.0

BEFORE_DEPLOY = ["CheckSpec", "ConvertToOnnx", "PackArtifact", "RunPreflight"]

# A failure no remediation takes: diagnosed, routed to fail, torn down, reported.
UNREMEDIATED_FAILURE = [
    "DiagnoseFailure",
    "PlanRemediation",
    "ChooseRemediation",
    "TeardownAfterFailure",
    "WriteFailureReport",
    "PipelineFailed",
]
"""Every run's states up to its first deploy."""
AFTER_IN_SERVICE = [
    "WarmUpShapes",
    "PlanBenchmark",
    "ChooseBenchmarkRunner",
    "RunBenchmark",
    "TeardownEndpoint",
    "WriteReport",
    "PipelineSucceeded",
]
"""A measured run's states once its endpoint serves."""
HAPPY_PATH = [
    *BEFORE_DEPLOY,
    "DeployEndpoint",
    "DescribeEndpoint",
    "IsEndpointInService",
    "WaitForEndpoint",
    *AFTER_IN_SERVICE,
]
"""A run that deploys once and succeeds, as :func:`collapse` folds its polling loop."""


POLLING_LOOP = {
    "DescribeEndpoint",
    "IsEndpointInService",
    "WaitForEndpoint",
    "PlaceInferenceComponents",
    "AreInferenceComponentsPlaced",
    "WaitForInferenceComponents",
}


def collapse(states: list[str]) -> list[str]:
    """Ordered states with the polling loop folded: each loop state counts once per loop."""
    out: list[str] = []
    in_loop: set[str] = set()
    for state in states:
        if state in POLLING_LOOP:
            if state in in_loop:
                continue
            in_loop.add(state)
        else:
            in_loop.clear()
        out.append(state)
    return out


def run(engine: LocalEngine, state: PipelineState) -> ExecutionOutcome:
    arn = engine.start_execution("deploy_pipeline", state.model_dump(mode="json"), name=state.run_id)
    return follow(engine.client("stepfunctions"), arn, poll_s=0.2, timeout_s=600)


def results(engine: LocalEngine, run_id: str, tmp_path: Path) -> dict[str, Any]:
    files = engine.download_results(run_id, tmp_path / "results")
    return json.loads(next(p for p in files if p.name == "result.json").read_text())
