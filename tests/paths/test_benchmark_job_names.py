"""Benchmark job names: one per try, because AWS never lets a processing job's name be used again.

Run against the local SageMaker, which keeps every job forever and refuses a used name as AWS does
(``ResourceInUse``); moto would silently replace the old job. Every name the pipeline makes is also
checked against botocore's own constraint for its request member.
"""

from __future__ import annotations

import re

import botocore.session
import pytest

from tests.conftest import fast_spec
from workflows import clock, naming
from workflows.benchmark.results import ShapeWarmup, WarmupResult
from workflows.contracts import (
    ArtifactManifest,
    BenchmarkJobRequest,
    BenchmarkPlan,
    BenchmarkPlanRequest,
    ConvertResult,
    DeployAttempt,
    DeployResult,
    Diagnosis,
    EndpointStatus,
    ErrorInfo,
    PackResult,
    ParityReport,
    PipelineState,
    PreflightResult,
)
from workflows.local.engine import BUCKET, REGION, LocalEngine
from workflows.remediation.plan import plan_remediation
from workflows.settings import Settings
from workflows.steps.plan_benchmark import plan
from workflows.steps.start_benchmark_job import start
from workflows.steps.stop_benchmark_job import stop

SETTINGS = Settings(bucket=BUCKET, sagemaker_role_arn="arn:aws:iam::123456789012:role/sm", region=REGION)
RUN = "names-20261201-120000-ab12"
MANIFEST = ArtifactManifest(
    task="embedding", architecture="BertModel", onnx_file="model.onnx", inputs=["input_ids"],
    outputs=["embedding"], opset=17, precision="fp32", max_sequence_length=64,
    onnxruntime_version="1.31.1", optimization="none", files=[],
    parity=ParityReport(texts=1, max_abs_diff=0.0, min_cosine=1.0, tolerance=1e-3, passed=True),
)  # fmt: skip


def benchmarked(attempt: DeployAttempt) -> PipelineState:
    """A run on its endpoint, warmed, about to plan its benchmark (a processing job)."""
    spec = fast_spec("bundled", benchmark={"runner": "processing-job"})
    deploy = DeployResult(
        endpoint_name=naming.endpoint_name(RUN, attempt.number),
        endpoint_config_name=naming.endpoint_config_name(RUN, attempt.number),
        model_names=[naming.model_name(RUN, attempt.number)],
        instance_type="ml.c6i.xlarge",
        created_at=clock.now(),
    )
    warm = ShapeWarmup(batch_size=1, sequence_length=8, requests=3, first_ms=9.0, last_ms=5.0, stable=True)
    return PipelineState(
        run_id=RUN,
        spec=spec,
        attempt=attempt,
        convert=ConvertResult(staging_uri=f"s3://{BUCKET}/staging/{RUN}/", manifest=MANIFEST, seconds=1.0),
        pack=PackResult(
            model_data_uri=f"s3://{BUCKET}/a/model.tar",
            size_bytes=1,
            sha256="0" * 64,
            compression="none",
            seconds=1.0,
        ),  # fmt: skip
        preflight=PreflightResult(),
        deploy=deploy,
        endpoint=EndpointStatus(status="InService"),
        warmup=WarmupResult(shapes=[warm], seconds=1.0),
    )


def planned(state: PipelineState) -> BenchmarkPlan:
    assert state.deploy is not None and state.warmup is not None
    return plan(
        BenchmarkPlanRequest(
            run_id=state.run_id,
            spec=state.spec,
            deploy=state.deploy,
            warmup=state.warmup,
            attempt=state.attempt,
        )
    )


def job_request(state: PipelineState, job_plan: BenchmarkPlan) -> BenchmarkJobRequest:
    assert state.deploy is not None
    return BenchmarkJobRequest(run_id=state.run_id, spec=state.spec, deploy=state.deploy, plan=job_plan)


def test_a_rerun_benchmark_gets_a_new_job_and_follows_it_not_the_stopped_one(engine: LocalEngine) -> None:
    sagemaker, s3 = engine.client("sagemaker"), engine.client("s3")
    # Given a run whose benchmark job was started, then stopped on the failure path
    first_state = benchmarked(DeployAttempt())
    first_plan = planned(first_state)
    started = start(job_request(first_state, first_plan), sagemaker=sagemaker, s3=s3, settings=SETTINGS)
    stopped = stop(job_request(first_state, first_plan).model_copy(update={"job": started}), sagemaker=sagemaker, settings=SETTINGS)  # fmt: skip
    # And a remediation that runs the benchmark again on the same endpoint (F12: retry with backoff)
    failed = first_state.model_copy(
        update={
            "benchmark_plan": first_plan,
            "benchmark_job": stopped,
            "error": ErrorInfo(Error="BenchmarkJobFailed", Cause="no capacity"),
            "diagnosis": Diagnosis(
                id="F12", title="no capacity", evidence=[], action="retry_with_backoff", confidence=0.9
            ),
        }
    )
    after = plan_remediation(failed, settings=SETTINGS)
    assert after.remediation is not None and after.remediation.route == "retry"
    # (and the result's remediation history names the stopped job)
    assert after.attempt.history[-1].benchmark_job == first_plan.job_name
    # When the benchmark is planned and started again
    second_state = benchmarked(after.attempt)
    second_plan = planned(second_state)
    second = start(job_request(second_state, second_plan), sagemaker=sagemaker, s3=s3, settings=SETTINGS)
    # Then the rerun has a name of its own, and the job it follows is the new one
    assert first_plan.job_name == f"db-{RUN}-a1-b1"
    assert second_plan.job_name == f"db-{RUN}-a1-b2" == second.job_name
    jobs = {j["ProcessingJobName"]: j for j in sagemaker.list_processing_jobs()["ProcessingJobSummaries"]}
    assert set(jobs) == {first_plan.job_name, second_plan.job_name}
    assert jobs[first_plan.job_name]["ProcessingJobStatus"] in {"Stopping", "Stopped"}
    followed = sagemaker.describe_processing_job(ProcessingJobName=second.job_name)
    assert followed["CreationTime"] >= jobs[first_plan.job_name]["CreationTime"]
    assert followed["ProcessingJobStatus"] not in {"Stopping", "Stopped"}
    # And the new job carries the run's tags, which the janitor reads
    tags = {
        t["Key"]: t["Value"] for t in sagemaker.list_tags(ResourceArn=followed["ProcessingJobArn"])["Tags"]
    }
    assert tags[naming.TAG_RUN_ID] == RUN and tags[naming.TAG_MANAGED] == "true"
    # And a retried start (same plan) follows the job it created instead of making another
    again = start(job_request(second_state, second_plan), sagemaker=sagemaker, s3=s3, settings=SETTINGS)
    assert again.job_name == second.job_name
    assert len(sagemaker.list_processing_jobs()["ProcessingJobSummaries"]) == 2
    stop(job_request(second_state, second_plan), sagemaker=sagemaker, settings=SETTINGS)


def sagemaker_constraint(operation: str, member: str) -> tuple[int, int, str]:
    shape = (
        botocore.session.get_session()
        .get_service_model("sagemaker")
        .operation_model(operation)
        .input_shape.members[member]
    )
    return shape.metadata.get("min", 0), shape.metadata["max"], shape.metadata["pattern"]


def test_the_longest_names_the_pipeline_makes_satisfy_botocores_constraints() -> None:
    # Given the longest run id (a 24-character spec name, a redeploy's 8-hex suffix) and the highest
    # attempt and remediation counts a spec allows (max_total_attempts <= 20; 130 decisions at most)
    run_id = naming.new_run_id("a" * 24, suffix="0" * 8)
    assert len(run_id) == 49
    names = {
        ("CreateEndpoint", "EndpointName"): naming.endpoint_name(run_id, 20),
        ("CreateEndpointConfig", "EndpointConfigName"): naming.endpoint_config_name(run_id, 20),
        ("CreateModel", "ModelName"): naming.model_name(run_id, 20, 9),
        ("CreateInferenceComponent", "InferenceComponentName"): naming.inference_component_name(
            run_id, 20, 9
        ),
        ("CreateProcessingJob", "ProcessingJobName"): naming.benchmark_job_name(run_id, 20, 130),
    }
    # Then each fits its request member's length and pattern in botocore's model
    for (operation, member), name in names.items():
        low, high, pattern = sagemaker_constraint(operation, member)
        assert low <= len(name) <= high, (member, name)
        assert re.fullmatch(pattern, name), (member, name, pattern)
        assert naming.NAME_PATTERN.match(name) and len(name) <= naming.MAX_NAME


def test_a_name_sagemaker_would_refuse_is_refused_when_it_is_made() -> None:
    with pytest.raises(ValueError, match="is not a SageMaker name: at most 63"):
        naming.benchmark_job_name("x" * 60, 1, 0)
    with pytest.raises(ValueError, match="shorten the spec's name"):
        naming.endpoint_name("bad_name", 1)
