"""Hosting modes end to end on the local engine: the same state machine, the local SageMaker serving.

Multi-container (Direct, each container on its own port, invoked by TargetContainerHostname),
serverless (memory-capped cold start) and inference components (placed by the wait loop once the
endpoint serves, invoked by InferenceComponentName). The light server stands in for MMS: at 200x a
30-60 s real MMS start reads as hours of Creating (see tests/paths/test_local_pipeline.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import serving_processes
from tests.support.hosting import spec_with
from tests.support.local_pipeline import HAPPY_PATH, TIME_SCALE, collapse, results, run
from workflows.contracts import PipelineState
from workflows.errors import NotServableLocally
from workflows.execution.pipeline import run_local
from workflows.local.engine import LocalEngine


@pytest.fixture(autouse=True)
def light_server(monkeypatch: pytest.MonkeyPatch) -> None:
    from workflows.container.environment import SERVER_ENV

    monkeypatch.setenv(SERVER_ENV, "light")


def run_mode(
    tiny_bert: Path, tmp_path: Path, run_id: str, hosting: dict[str, Any]
) -> tuple[Any, dict[str, Any], Any]:
    spec = spec_with(str(tiny_bert), hosting, benchmark={"batch_sizes": [1], "sequence_lengths": [16]})
    state = PipelineState(run_id=run_id, spec=spec)
    with LocalEngine(workdir=tmp_path / "engine", time_scale=TIME_SCALE) as engine:
        outcome = run(engine, state)
        result = results(engine, state.run_id, tmp_path)
        left = (
            (dict(engine.sagemaker.endpoints), dict(engine.sagemaker.components))
            if engine.sagemaker
            else None
        )
    return outcome, result, left


def test_multi_container_co_hosts_two_containers_and_benchmarks_its_own(
    tiny_bert: Path, tmp_path: Path
) -> None:
    # Given the tiny model co-hosted with a second copy of itself on one CPU instance (Direct)
    outcome, result, left = run_mode(
        tiny_bert, tmp_path, "mc-1",
        {"mode": "multi-container", "instance_type_fallbacks": ["ml.c6i.2xlarge"], "models": [{"name": "second"}]},
    )  # fmt: skip
    # Then the same states ran, the benchmark reached the 'main' container by hostname
    assert outcome.status == "SUCCEEDED", outcome.cause
    assert collapse(outcome.states) == HAPPY_PATH
    assert result["deploy"]["target"] == {"TargetContainerHostname": "main"}
    assert result["deploy"]["targets"]["second"] == {"TargetContainerHostname": "second"}
    assert all(s["errors"] == 0 and s["requests"] > 0 for s in result["benchmark"]["shapes"])
    # And both containers logged their start (one stream per hostname)
    logs = {p.name for p in (tmp_path / "engine" / "endpoints").parent.rglob("*.log")}
    assert any("-main" in name for name in logs) and any("-second" in name for name in logs)
    assert left == ({}, {}) and serving_processes() == []


def test_serverless_runs_cold_start_and_all(tiny_bert: Path, tmp_path: Path) -> None:
    outcome, result, left = run_mode(
        tiny_bert, tmp_path, "sls-1", {"mode": "serverless", "memory_size_mb": 2048}
    )
    assert outcome.status == "SUCCEEDED", outcome.cause
    # A serverless endpoint is InService before any container starts: the loop may not wait at all
    assert [s for s in collapse(outcome.states) if s != "WaitForEndpoint"] == [
        s for s in HAPPY_PATH if s != "WaitForEndpoint"
    ]
    assert result["deploy"]["instance_type"] == "serverless"
    assert result["deploy"]["effective_hosting"]["memory_size_mb"] == 2048
    # The first request started the container: the cold start is reported apart
    assert result["warmup"]["cold_start"]["latency_ms"] > 0
    assert left == ({}, {}) and serving_processes() == []


def test_serverless_with_provisioned_concurrency_starts_warm_and_prices_the_held_concurrency(
    tiny_bert: Path, tmp_path: Path
) -> None:
    # Given a serverless spec that keeps one request warm
    outcome, result, left = run_mode(
        tiny_bert,
        tmp_path,
        "slp-1",
        {"mode": "serverless", "memory_size_mb": 2048, "max_concurrency": 2, "provisioned_concurrency": 1},
    )
    assert outcome.status == "SUCCEEDED", outcome.cause
    # Then the endpoint waited for its container (Creating until it served), and the result says so
    assert "WaitForEndpoint" in collapse(outcome.states)
    assert result["hosting"]["provisioned_concurrency"] == 1
    # And the first request, a warm one now, is still reported apart from the measured figures
    assert result["warmup"]["cold_start"]["latency_ms"] > 0
    assert all(m["requests"] > 0 for m in result["measurements"])
    # And the cost holds the concurrency for the endpoint's life, at its own (unfilled) rate
    lines = {line["item"]: line for line in result["cost"]["lines"]}
    held = lines["provisioned concurrency 1 × 2048 MB"]
    assert held["quantity"] > 0 and held["cost"] is None
    assert left == ({}, {}) and serving_processes() == []


def test_inference_components_are_placed_by_their_own_state_and_torn_down(
    tiny_bert: Path, tmp_path: Path
) -> None:
    outcome, result, left = run_mode(
        tiny_bert,
        tmp_path,
        "ic-1",
        {"mode": "inference-component", "instance_type_fallbacks": ["ml.c6i.xlarge"], "copies": 1},
    )
    assert outcome.status == "SUCCEEDED", outcome.cause
    # Then the endpoint (no model of its own) serves at once; PlaceInferenceComponents then creates the
    # component and follows it until its copy serves
    placing = ["PlaceInferenceComponents", "AreInferenceComponentsPlaced", "WaitForInferenceComponents"]
    at = HAPPY_PATH.index("WaitForEndpoint")
    assert collapse(outcome.states) == [*HAPPY_PATH[:at], *placing, *HAPPY_PATH[at + 1 :]]
    # And the endpoint was InService before its component served, and the benchmark named the component
    assert result["deploy"]["target"] == {"InferenceComponentName": "db-ic-1-a1-ic0"}
    assert "inference-component/db-ic-1-a1-ic0" in result["teardown"]["deleted"]
    assert result["endpoint"]["components"][0]["current_copies"] == 1
    assert left == ({}, {}) and serving_processes() == []


@pytest.mark.parametrize("mode", ["triton", "lmi", "vllm", "scale-to-zero"])
def test_modes_the_local_engine_cannot_serve_fail_before_it_starts(mode: str, tmp_path: Path) -> None:
    hosting: dict[str, Any] = {"mode": mode, "instance_type_fallbacks": ["ml.g5.xlarge"]}
    if mode == "scale-to-zero":
        hosting["accelerator_devices"] = 1
    state = PipelineState(run_id=f"{mode}-1", spec=spec_with("bundled", hosting))
    # When a local run is asked for
    with pytest.raises(NotServableLocally, match=f"mode {mode} cannot be served locally: "):
        run_local(state, results_dir=tmp_path, time_scale=TIME_SCALE)
    # Then nothing started: no engine folder, no server
    assert not (tmp_path / state.run_id).exists()
    assert serving_processes() == []
