"""The benchmark as a processing job: the CreateProcessingJob request, the shipped engine run as the
job's own script, polling, collecting, stopping (where the benchmark runs: test_plan_benchmark.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from tests.conftest import fast_spec
from tests.support.aws import Aws
from workflows import clock
from workflows.aws.storage import download_folder, upload_folder
from workflows.benchmark import JOB_MODULES
from workflows.benchmark import job as benchmark_job
from workflows.benchmark.noop_endpoint import NoopEndpoint
from workflows.contracts import (
    BenchmarkJobRequest,
    BenchmarkJobStatus,
    BenchmarkPlan,
    DeployResult,
)
from workflows.errors import BenchmarkFailed, BenchmarkJobFailed
from workflows.settings import Settings
from workflows.steps.collect_benchmark_results import collect
from workflows.steps.describe_benchmark_job import describe
from workflows.steps.start_benchmark_job import start
from workflows.steps.stop_benchmark_job import stop

SETTINGS = Settings(bucket="bench-bucket", sagemaker_role_arn="arn:aws:iam::123456789012:role/sm")
JOB = "db-run-j-a1-b1"


def deploy_on(instance_type: str = "ml.c6i.xlarge") -> DeployResult:
    return DeployResult(
        endpoint_name="db-run-j-a1",
        endpoint_config_name="db-run-j-a1",
        model_names=["db-run-j-a1-m0"],
        instance_type=instance_type,
        created_at=clock.now(),
    )


def job_request(job: BenchmarkJobStatus | None = None, **benchmark: Any) -> BenchmarkJobRequest:
    spec = fast_spec("bundled", benchmark={"runner": "processing-job", **benchmark})
    plan_ = BenchmarkPlan(
        runner="processing-job",
        reason="test",
        planned_s=spec.benchmark.planned_seconds(),
        job_name=JOB,
        job_instance_type=spec.benchmark.job_instance_type,
    )
    return BenchmarkJobRequest(run_id="run-j", spec=spec, deploy=deploy_on(), plan=plan_, job=job)


def test_the_job_request_has_the_api_shape_and_runs_the_shipped_script(aws: Aws) -> None:
    s3 = aws.s3
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    request = job_request()
    expected = benchmark_job.processing_job_request(request, settings=SETTINGS)
    # Given a stubbed SageMaker that validates parameters against the service model
    with Stubber(sagemaker) as stub:
        # (Tags hold an expiry computed from the clock at each call: checked below, not matched here.)
        stub.add_response("create_processing_job", {"ProcessingJobArn": "arn:job"}, {**expected, "Tags": ANY})
        # When the job starts
        status = start(request, sagemaker=sagemaker, s3=s3, settings=SETTINGS)
        stub.assert_no_pending_responses()
    # Then it runs the entry script with the engine beside it, files in, files out
    app = expected["AppSpecification"]
    assert app["ContainerEntrypoint"] == ["python3", "/opt/ml/processing/input/code/run.py"]
    assert app["ImageUri"].endswith(
        "huggingface-pytorch-inference:2.6.0-transformers5.5.3-cpu-py312-ubuntu22.04"
    )
    inputs = {i["InputName"]: i["S3Input"] for i in expected["ProcessingInputs"]}
    assert inputs["code"]["S3Uri"] == "s3://bench-bucket/staging/run-j/benchmark-job/code/"
    assert inputs["config"]["LocalPath"] == "/opt/ml/processing/input/config"
    [output] = expected["ProcessingOutputConfig"]["Outputs"]
    assert (
        output["S3Output"]["S3Uri"] == status.output_uri == "s3://bench-bucket/results/run-j/benchmark-job/"
    )
    assert expected["ProcessingResources"]["ClusterConfig"]["InstanceType"] == "ml.c5.xlarge"
    assert expected["StoppingCondition"]["MaxRuntimeInSeconds"] >= 900
    assert {"Key": "deploybench:run-id", "Value": "run-j"} in expected["Tags"]
    assert status.status == "InProgress" and status.job_name == JOB


def test_a_retried_start_follows_the_job_it_already_created(aws: Aws) -> None:
    s3 = aws.s3
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    with Stubber(sagemaker) as stub:
        stub.add_client_error(
            "create_processing_job",
            "ResourceInUse",
            "Job name must be unique within an AWS account and region, and a job with this name already exists",
        )
        status = start(job_request(), sagemaker=sagemaker, s3=s3, settings=SETTINGS)
    assert status.status == "InProgress"


def test_a_pooled_endpoint_records_its_types_when_the_job_starts(aws: Aws) -> None:
    # Given a pooled deploy (instance pools ml.g6.xlarge then ml.g5.xlarge) whose second pool serves
    pooled = ["ml.g6.xlarge", "ml.g5.xlarge"]
    request = job_request()
    request = request.model_copy(
        update={"deploy": request.deploy.model_copy(update={"instance_pools": pooled})}
    )
    described = {
        "EndpointName": "db-run-j-a1",
        "EndpointArn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint/db-run-j-a1",
        "EndpointConfigName": "db-run-j-a1",
        "EndpointStatus": "InService",
        "CreationTime": clock.now(),
        "LastModifiedTime": clock.now(),
        "ProductionVariants": [
            {
                "VariantName": "primary",
                "CurrentInstanceCount": 1,
                "InstancePools": [
                    {"InstanceType": "ml.g6.xlarge", "CurrentInstanceCount": 0},
                    {"InstanceType": "ml.g5.xlarge", "CurrentInstanceCount": 1},
                ],
            }
        ],
    }
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    with Stubber(sagemaker) as stub:
        stub.add_response("create_processing_job", {"ProcessingJobArn": "arn:job"}, None)
        stub.add_response("describe_endpoint", described, {"EndpointName": "db-run-j-a1"})
        # When the job starts
        status = start(request, sagemaker=sagemaker, s3=aws.s3, settings=SETTINGS)
    # Then the pools' counts at its start are kept for CollectBenchmarkResults, and polls keep them
    assert status.fleet_before == {"ml.g6.xlarge": 0, "ml.g5.xlarge": 1}
    polled = benchmark_job.job_status(request.model_copy(update={"job": status}), SETTINGS, "InProgress", 1)
    assert polled.fleet_before == status.fleet_before


def run_job_script(folder: Path, *, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run the uploaded entry script the way the job does, with pydantic and yaml unimportable and
    this repository nowhere on the path: only the shipped bundle can satisfy its imports."""
    wrapper = (
        "import runpy, sys\n"
        "sys.modules['pydantic'] = None; sys.modules['yaml'] = None\n"
        f"sys.argv = ['run.py', '--config', {str(folder / 'config/job.json')!r}, '--output', "
        f"{str(folder / 'out')!r}, '--message-file', {str(folder / 'message')!r}]\n"
        "try:\n"
        f"    runpy.run_path({str(folder / 'code/run.py')!r}, run_name='__main__')\n"
        "finally:\n"
        "    print('ENGINE', sys.modules['workflows.benchmark.engine'].__file__, file=sys.stderr)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", wrapper], cwd=folder, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_uploaded_bundle_runs_the_same_engine_as_a_job_and_is_collected(
    aws: Aws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sagemaker, s3 = aws.sagemaker, aws.s3
    request = job_request()
    # Given the job started: its code and config uploaded as the job's inputs
    start(request, sagemaker=sagemaker, s3=s3, settings=SETTINGS)
    download_folder(s3, benchmark_job.job_prefix(SETTINGS, "run-j"), tmp_path)
    shipped = sorted(p.relative_to(tmp_path / "code").as_posix() for p in (tmp_path / "code").rglob("*.py"))
    assert shipped == sorted([*JOB_MODULES, "run.py"])
    # When SageMaker would run it: the script alone, against an endpoint
    with NoopEndpoint() as endpoint:
        env = {
            "PATH": "/usr/bin:/bin",
            "AWS_ACCESS_KEY_ID": "job",
            "AWS_SECRET_ACCESS_KEY": "job",
            "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME": endpoint.url,
        }
        completed = run_job_script(tmp_path, env=env)
    # Then it wrote the engine's output with the shipped engine, and the output is collected
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert f"ENGINE {tmp_path / 'code'}" in completed.stderr
    output = json.loads((tmp_path / "out" / "benchmark.json").read_text())
    assert output["environment"]["runner"] == "processing-job"
    upload_folder(s3, tmp_path / "out", benchmark_job.output_uri(SETTINGS, "run-j"))
    finished = request.model_copy(
        update={
            "job": benchmark_job.job_status(request, SETTINGS, "Completed").model_copy(
                update={"ended_at": clock.now()}
            )
        }
    )
    result = collect(finished, s3=s3)
    assert result.runner == "processing-job"
    assert {(s.batch_size, s.sequence_length) for s in result.shapes} == {
        (1, "natural"),
        (2, "natural"),
        (1, 16),
        (2, 16),
    }
    assert result.detail_uri == "s3://bench-bucket/results/run-j/benchmark-job/benchmark.json"


def test_a_failing_job_script_says_why_in_its_exit_message(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "job.json").write_text(json.dumps({"region": "us-east-1", "colour": "red"}))
    code = tmp_path / "code"
    root = Path(__file__).resolve().parents[2]
    for module in JOB_MODULES:
        (code / module).parent.mkdir(parents=True, exist_ok=True)
        (code / module).write_bytes((root / module).read_bytes())
    (code / "run.py").write_bytes((root / "artifacts" / "benchmark_job" / "run.py").read_bytes())
    completed = run_job_script(tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert completed.returncode == 1
    assert (tmp_path / "message").read_text().startswith("ValueError: unknown engine settings ['colour']")


def test_collecting_a_job_whose_every_request_failed_fails_the_benchmark(aws: Aws) -> None:
    s3 = aws.s3
    measurement = {
        "batch_size": 1,
        "sequence_length": "natural",
        "concurrency": 1,
        "requests": 12,
        "errors": 12,
        "errors_by_kind": {"ModelError": 12},
        "duration_s": 1.0,
        **dict.fromkeys(("p50_ms", "p90_ms", "p99_ms", "max_ms", "mean_ms", "std_ms")),
        "samples_per_s": 0.0,
        "requests_per_s": 0.0,
        "stable": False,
    }
    output = {"environment": {"endpoint_url": "x"}, "measurements": [measurement], "warm_checks": []}
    s3.put_object(
        Bucket=SETTINGS.bucket, Key="results/run-j/benchmark-job/benchmark.json", Body=json.dumps(output)
    )
    request = job_request()
    request = request.model_copy(update={"job": benchmark_job.job_status(request, SETTINGS, "Completed")})
    with pytest.raises(BenchmarkFailed, match="ModelError"):
        collect(request, s3=s3)


def describe_answer(status: str, **extra: Any) -> dict[str, Any]:
    return {
        "ProcessingJobName": JOB,
        "ProcessingJobArn": "arn:aws:sagemaker:us-east-1:123456789012:processing-job/" + JOB,
        "ProcessingJobStatus": status,
        "ProcessingResources": {
            "ClusterConfig": {"InstanceCount": 1, "InstanceType": "ml.c5.xlarge", "VolumeSizeInGB": 30}
        },
        "AppSpecification": {"ImageUri": "img"},
        "CreationTime": clock.now(),
        **extra,
    }


def polled(answer: dict[str, Any], request: BenchmarkJobRequest) -> BenchmarkJobStatus:
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    with Stubber(sagemaker) as stub:
        stub.add_response("describe_processing_job", answer, {"ProcessingJobName": JOB})
        return describe(request, sagemaker=sagemaker, settings=SETTINGS)


def test_polling_backs_off_while_the_job_runs_and_reports_completion() -> None:
    request = job_request()
    first = polled(describe_answer("InProgress"), request)
    second = polled(describe_answer("InProgress"), request.model_copy(update={"job": first}))
    done = polled(
        describe_answer("Completed", ProcessingEndTime=clock.now()),
        request.model_copy(update={"job": second}),
    )
    assert (first.polls, second.polls, done.status) == (1, 2, "Completed")
    assert second.next_wait_s > first.next_wait_s
    assert done.ended_at is not None


def test_a_failed_job_fails_the_step_with_its_reason_and_exit_message() -> None:
    answer = describe_answer(
        "Failed", FailureReason="AlgorithmError: exit 1", ExitMessage="ValueError: bad config"
    )
    with pytest.raises(BenchmarkJobFailed, match="AlgorithmError: exit 1.*ValueError: bad config"):
        polled(answer, job_request())


def test_a_job_running_past_its_stopping_condition_fails_the_step() -> None:
    request = job_request()
    late = benchmark_job.job_status(request, SETTINGS, "InProgress").model_copy(
        update={"started_at": clock.now() - timedelta(seconds=benchmark_job.max_runtime_s(request) + 3600)}
    )
    with pytest.raises(BenchmarkJobFailed, match="past its MaxRuntimeInSeconds"):
        polled(describe_answer("InProgress"), request.model_copy(update={"job": late}))


@pytest.mark.parametrize(("status", "stops"), [("InProgress", True), ("Completed", False), ("Failed", False)])
def test_the_failure_path_stops_a_running_job_only(status: str, stops: bool) -> None:
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    with Stubber(sagemaker) as stub:
        stub.add_response("describe_processing_job", describe_answer(status), {"ProcessingJobName": JOB})
        if stops:
            stub.add_response("stop_processing_job", {}, {"ProcessingJobName": JOB})
        result = stop(job_request(), sagemaker=sagemaker, settings=SETTINGS)
        stub.assert_no_pending_responses()
    assert result.status == ("Stopping" if stops else status)


def test_stopping_a_job_that_was_never_created_is_fine(aws: Aws) -> None:
    sagemaker = aws.sagemaker
    result = stop(job_request(), sagemaker=sagemaker, settings=SETTINGS)
    assert result.status == "NotCreated"
