"""State-machine path tests: the real definition and handlers on the local engine."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fast_spec, serving_processes
from tests.support.local_pipeline import HAPPY_PATH, TIME_SCALE, UNREMEDIATED_FAILURE, collapse, results, run
from workflows import naming
from workflows.contracts import DeployRequest, PipelineState
from workflows.errors import DeployRejected
from workflows.local.engine import LocalEngine


@pytest.fixture(autouse=True)
def light_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """Path tests drive the state machine at 200x: MMS's 30-60 s real start would read as hours of
    Creating (past wait.timeout_min). The light server starts in seconds; the real stack has its own
    tests (test_serving_stack.py) and serves the end-to-end run."""
    from workflows.container.environment import SERVER_ENV

    monkeypatch.setenv(SERVER_ENV, "light")


def test_happy_path_runs_every_step_and_leaves_nothing(tiny_bert: Path, tmp_path: Path) -> None:
    # Given the tiny model and a short benchmark
    state = PipelineState(run_id="happy-1", spec=fast_spec(tiny_bert))
    environment = dict(os.environ)
    with LocalEngine(workdir=tmp_path / "engine", time_scale=TIME_SCALE) as engine:
        # When the deploy pipeline runs
        outcome = run(engine, state)
        result = results(engine, state.run_id, tmp_path)
        running = engine.sagemaker.running_containers() if engine.sagemaker else []
    # Then the process environment is as it was: nothing the engine set reaches later code in-process
    assert dict(os.environ) == environment
    # Then every step ran in order and the execution succeeded
    assert outcome.status == "SUCCEEDED", outcome.cause
    assert collapse(outcome.states) == HAPPY_PATH
    # And a short CPU benchmark ran in the Lambda
    assert outcome.output["benchmark_plan"]["runner"] == "lambda"
    # And the output carries figures for every shape
    shapes = outcome.output["benchmark"]["shapes"]
    assert {(s["batch_size"], s["sequence_length"]) for s in shapes} == {
        (1, "natural"),
        (2, "natural"),
        (1, 16),
        (2, 16),
    }
    assert all(0 < s["p50_ms"] <= s["p99_ms"] <= s["max_ms"] for s in shapes)
    assert result["status"] == "SUCCEEDED"
    assert result["schema_version"] == 2
    assert result["convert"]["manifest"]["parity"]["passed"]
    # And the result holds every figure: windows and latency samples, the warmup, the cold start
    assert all(m["windows"] and m["latencies_ms"] for m in result["measurements"])
    # And each measurement's utilisation is the local serving group's own, over its window
    used = [m["utilisation"] for m in result["measurements"]]
    assert all(u["source"] == "local" and u["memory_pct"] > 0 for u in used), used
    assert any(u["cpu_pct"] > 0 for u in used) and all(0 <= u["cpu_pct"] <= 100 for u in used), used
    assert result["warmup"]["cold_start"]["latency_ms"] > 0
    assert result["warmup"]["shapes"][0]["concurrency"] >= 1
    # And CloudWatch figures are not faked for a local endpoint
    assert result["cloudwatch"]["available"] is False
    assert "not available locally" in result["cloudwatch"]["reason"]
    assert result["cost"]["lines"][0]["item"].startswith("endpoint ml.c6i.xlarge")
    # And nothing is left: no endpoint in the local SageMaker, no server process
    assert any(d.startswith("endpoint/") for d in outcome.output["teardown"]["deleted"])
    assert running == []
    assert engine.leaked_endpoints == []
    assert serving_processes() == []


def test_failure_in_deploy_tears_down_and_fails_with_the_error_name(
    tiny_bert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import workflows.hosting.realtime as realtime

    created: list[str] = []
    real_deploy = realtime.RealtimeMode.deploy

    def half_deploy(self: Any, request: DeployRequest, *, clients: Any, settings: Any) -> Any:
        # Given a deploy that creates its model, then is rejected on the endpoint config
        model = f"db-{request.run_id}-a1-m0"
        clients.sagemaker.create_model(
            ModelName=model,
            PrimaryContainer={"Image": "img", "ModelDataUrl": request.pack.model_data_uri},
            ExecutionRoleArn=settings.sagemaker_role_arn,
            Tags=naming.tags(request.run_id, request.spec),  # as every deploy tags (the role requires it)
        )
        created.append(model)
        raise DeployRejected("create endpoint config: ValidationException: injected by the test")

    monkeypatch.setattr(realtime.RealtimeMode, "deploy", half_deploy)
    state = PipelineState(run_id="fails-1", spec=fast_spec(tiny_bert))
    with LocalEngine(workdir=tmp_path / "engine", time_scale=TIME_SCALE) as engine:
        # When the pipeline runs
        outcome = run(engine, state)
        result = results(engine, state.run_id, tmp_path)
        models_left = engine.sagemaker.models if engine.sagemaker else {"?": {}}
    # Then it went through diagnosis and teardown, and failed with the error's name
    assert outcome.status == "FAILED"
    assert outcome.error == "DeployRejected"
    assert outcome.states == [
        "CheckSpec",
        "ConvertToOnnx",
        "PackArtifact",
        "RunPreflight",
        "DeployEndpoint",
        *UNREMEDIATED_FAILURE,
    ]
    assert created and f"model/{created[0]}" in result["teardown"]["deleted"]
    assert models_left == {}
    assert result["status"] == "FAILED"
    assert result["error"]["Error"] == "DeployRejected"
    assert result["remediation"]["route"] == "fail"
    assert result["attempt"]["history"][-1]["reason"] == "no automatic fix for unknown"
    assert real_deploy is not realtime.RealtimeMode.deploy


def test_capacity_stall_is_recognised_early_and_the_endpoint_deleted_once_it_fails(
    tiny_bert: Path, tmp_path: Path
) -> None:
    from workflows.local.faults import Fault, FaultPlan

    # Given no capacity for the only instance type: Creating, no variants, frozen LastModifiedTime (F06)
    plan = FaultPlan(faults=[Fault(id="F06", stall_minutes=20)])
    spec = fast_spec(
        tiny_bert, hosting={"instance_type_fallbacks": ["ml.g5.12xlarge"]}, wait={"stall_threshold_min": 5}
    )
    state = PipelineState(run_id="stall-1", spec=spec)
    with LocalEngine(workdir=tmp_path / "engine", time_scale=TIME_SCALE, fault_plan=plan) as engine:
        outcome = run(engine, state)
        result = results(engine, state.run_id, tmp_path)
        left = dict(engine.sagemaker.endpoints) if engine.sagemaker else {"?": None}
    # Then the stall is named after the threshold, long before the endpoint itself fails
    assert outcome.status == "FAILED"
    assert outcome.error == "CapacityStall"
    assert result["diagnosis"]["id"] == "F06"
    # And teardown waited for the endpoint to leave Creating, then deleted it
    assert "endpoint/db-stall-1-a1" in result["teardown"]["deleted"]
    assert left == {}


JOB_LOOP = {"WaitForBenchmarkJob", "DescribeBenchmarkJob", "IsBenchmarkJobDone"}


def test_a_failed_benchmark_job_is_stopped_then_diagnosed_and_torn_down(
    tiny_bert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lambdas.describe_benchmark_job
    import lambdas.start_benchmark_job
    from workflows.benchmark import job as benchmark_job
    from workflows.errors import BenchmarkJobFailed

    # Given a benchmark sent to a processing job that is started, then found Failed
    def started(request: Any, *, sagemaker: Any, s3: Any, settings: Any, endpoint_sagemaker: Any) -> Any:
        return benchmark_job.job_status(request, settings, "InProgress")

    def failed(request: Any, *, sagemaker: Any, settings: Any) -> Any:
        raise BenchmarkJobFailed(
            f"benchmark job {request.plan.job_name} is Failed: FailureReason: AlgorithmError."
        )

    monkeypatch.setattr(lambdas.start_benchmark_job, "start", started)
    monkeypatch.setattr(lambdas.describe_benchmark_job, "describe", failed)
    state = PipelineState(
        run_id="job-fails-1", spec=fast_spec(tiny_bert, benchmark={"runner": "processing-job"})
    )
    with LocalEngine(workdir=tmp_path / "engine", time_scale=TIME_SCALE) as engine:
        # When the pipeline runs
        outcome = run(engine, state)
        result = results(engine, state.run_id, tmp_path)
    # Then the job path stopped the job, diagnosed the failure and tore the endpoint down
    assert outcome.status == "FAILED"
    assert outcome.error == "BenchmarkJobFailed"
    tail = outcome.states[outcome.states.index("PlanBenchmark") :]
    assert tail == [
        "PlanBenchmark",
        "ChooseBenchmarkRunner",
        "StartBenchmarkJob",
        "WaitForBenchmarkJob",
        "DescribeBenchmarkJob",
        "StopBenchmarkJob",
        *UNREMEDIATED_FAILURE,
    ]
    assert result["benchmark_plan"]["runner"] == "processing-job"
    assert "endpoint/db-job-fails-1-a1" in result["teardown"]["deleted"]


def test_the_benchmark_runs_as_a_processing_job_through_the_local_sagemaker(
    tiny_bert: Path, tmp_path: Path
) -> None:
    # Given a benchmark sent to a processing job
    state = PipelineState(run_id="job-1", spec=fast_spec(tiny_bert, benchmark={"runner": "processing-job"}))
    with LocalEngine(workdir=tmp_path / "engine", time_scale=TIME_SCALE) as engine:
        # When the pipeline runs
        outcome = run(engine, state)
        result = results(engine, state.run_id, tmp_path)
    # Then the job ran the engine and its figures were collected
    assert outcome.status == "SUCCEEDED", outcome.cause
    states = [s for s in collapse(outcome.states) if s not in JOB_LOOP]
    assert states[states.index("PlanBenchmark") :] == [
        "PlanBenchmark",
        "ChooseBenchmarkRunner",
        "StartBenchmarkJob",
        "CollectBenchmarkResults",
        "TeardownEndpoint",
        "WriteReport",
        "PipelineSucceeded",
    ]
    assert set(outcome.states) >= JOB_LOOP
    assert result["benchmark"]["runner"] == "processing-job"
    assert result["environment"]["load_generator"]["runner"] == "processing-job"
    assert all(m["latencies_ms"] for m in result["measurements"])
