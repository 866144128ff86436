"""The benchmark as a SageMaker processing job: start it, follow it, collect its figures, stop it.

The job runs ``artifacts/benchmark_job/run.py`` with the SAME engine modules as the Lambda
(``workflows.benchmark.JOB_MODULES``), uploaded as the job's code input; its config and its
output are files (``/opt/ml/processing/input/config``, ``/opt/ml/processing/output``), so the
script never calls S3 itself. The state machine polls it with Wait + describe + Choice (no
``.sync``), and every failure on this path stops the job before the run is diagnosed.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

import workflows
from workflows import clock, naming
from workflows.aws import aws_errors, error_code, is_not_found, translate
from workflows.benchmark import JOB_MODULES
from workflows.contracts import BenchmarkJobRequest, BenchmarkJobStatus, BenchmarkResult
from workflows.errors import BenchmarkJobFailed
from workflows.images import HF_INFERENCE, image_uri
from workflows.lifetime import runtime_limit_s
from workflows.settings import Settings
from workflows.steps.benchmark import compact, engine_config, require_answers
from workflows.steps.wait import next_wait_seconds
from workflows.storage import get_text, put_text, upload_file

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client
    from types_boto3_sagemaker import SageMakerClient

PROCESSING = "/opt/ml/processing"
CODE_DIR = f"{PROCESSING}/input/code"
CONFIG_DIR = f"{PROCESSING}/input/config"
OUTPUT_DIR = f"{PROCESSING}/output/benchmark"
CONFIG_FILE = "job.json"
OUTPUT_FILE = "benchmark.json"
ENTRY = "run.py"
VOLUME_GB = 30
RUNNING = {"InProgress", "Stopping"}


def _repository_root() -> Path:
    return Path(workflows.__file__).resolve().parent.parent


def job_prefix(settings: Settings, run_id: str) -> str:
    """Code and config of the job: under the staging prefix, which teardown deletes."""
    return f"s3://{settings.bucket}/{naming.staging_prefix(run_id)}benchmark-job/"


def output_uri(settings: Settings, run_id: str) -> str:
    """Where SageMaker uploads the job's output: next to the run's result."""
    return f"s3://{settings.bucket}/{naming.results_prefix(run_id)}benchmark-job/"


def max_runtime_s(request: BenchmarkJobRequest) -> int:
    """The run's job's MaxRuntimeInSeconds (``runtime_limit_s`` of its spec and plan)."""
    return runtime_limit_s(request.spec.benchmark, request.plan.planned_s)


def upload_code(s3: S3Client, prefix: str) -> list[str]:
    """The entry script and the engine modules, at the paths the script imports them from."""
    root = _repository_root()
    uris = [upload_file(s3, root / module, f"{prefix}code/{module}") for module in JOB_MODULES]
    entry = files("artifacts") / "benchmark_job" / ENTRY
    uris.append(put_text(s3, f"{prefix}code/{ENTRY}", entry.read_text(encoding="utf-8"), "text/x-python"))
    return uris


def processing_job_request(request: BenchmarkJobRequest, *, settings: Settings) -> dict[str, Any]:
    """The CreateProcessingJob parameters of the run's benchmark job."""
    prefix = job_prefix(settings, request.run_id)
    benchmark = request.spec.benchmark
    image = benchmark.job_image or image_uri(HF_INFERENCE, gpu=False, region=settings.region)

    def s3_input(name: str, local_path: str) -> dict[str, Any]:
        return {
            "InputName": name,
            "S3Input": {
                "S3Uri": f"{prefix}{name}/",
                "LocalPath": local_path,
                "S3DataType": "S3Prefix",
                "S3InputMode": "File",
            },
        }

    return {
        "ProcessingJobName": request.plan.job_name,
        "ProcessingResources": {
            "ClusterConfig": {
                "InstanceCount": 1,
                "InstanceType": request.plan.job_instance_type,
                "VolumeSizeInGB": VOLUME_GB,
            }
        },
        "StoppingCondition": {"MaxRuntimeInSeconds": max_runtime_s(request)},
        "AppSpecification": {
            "ImageUri": image,
            "ContainerEntrypoint": ["python3", f"{CODE_DIR}/{ENTRY}"],
            "ContainerArguments": ["--config", f"{CONFIG_DIR}/{CONFIG_FILE}", "--output", OUTPUT_DIR],
        },
        "ProcessingInputs": [s3_input("code", CODE_DIR), s3_input("config", CONFIG_DIR)],
        "ProcessingOutputConfig": {
            "Outputs": [
                {
                    "OutputName": "benchmark",
                    "S3Output": {
                        "S3Uri": output_uri(settings, request.run_id),
                        "LocalPath": OUTPUT_DIR,
                        "S3UploadMode": "EndOfJob",
                    },
                }
            ]
        },
        "RoleArn": settings.sagemaker_role_arn,
        "Environment": {"PYTHONUNBUFFERED": "1", "DEPLOYBENCH_RUN_ID": request.run_id},
        "Tags": naming.tags(request.run_id, request.spec),
    }


def job_status(
    request: BenchmarkJobRequest, settings: Settings, status: str, polls: int = 0
) -> BenchmarkJobStatus:
    wait = request.spec.wait
    return BenchmarkJobStatus(
        job_name=request.plan.job_name,
        status=status,
        output_uri=output_uri(settings, request.run_id),
        polls=polls,
        next_wait_s=next_wait_seconds(
            polls + 1, initial=wait.poll_initial_s, maximum=wait.poll_max_s, backoff=wait.backoff
        ),
        started_at=request.job.started_at if request.job else clock.now(),
    )


def start(
    request: BenchmarkJobRequest, *, sagemaker: SageMakerClient, s3: S3Client, settings: Settings
) -> BenchmarkJobStatus:
    """Upload code and config, create the job; a retried call finds the job it already created."""
    prefix = job_prefix(settings, request.run_id)
    upload_code(s3, prefix)
    config = {
        **engine_config(request.spec, request.deploy.endpoint_name, request.deploy.target).to_dict(),
        "region": settings.region,
        "runner": "processing-job",
    }
    put_text(s3, f"{prefix}config/{CONFIG_FILE}", json.dumps(config, indent=2), "application/json")
    try:
        sagemaker.create_processing_job(**processing_job_request(request, settings=settings))
    except ClientError as error:
        # A retried start after a create that went through: the job exists, follow it.
        if error_code(error) not in {"ResourceInUse", "ValidationException"} or "already exists" not in str(
            error
        ):
            raise translate(error, f"create processing job {request.plan.job_name}") from error
    return job_status(request, settings, "InProgress")


def describe(
    request: BenchmarkJobRequest, *, sagemaker: SageMakerClient, settings: Settings
) -> BenchmarkJobStatus:
    """One poll of the job.

    Raises:
        BenchmarkJobFailed: the job Failed or Stopped (FailureReason and ExitMessage quoted), or it
            is still running past its StoppingCondition plus a poll.
    """
    name = request.plan.job_name
    with aws_errors(f"describe processing job {name}"):
        job = sagemaker.describe_processing_job(ProcessingJobName=name)
    polls = (request.job.polls if request.job else 0) + 1
    current = job_status(request, settings, job["ProcessingJobStatus"], polls)
    current = current.model_copy(
        update={
            "failure_reason": job.get("FailureReason"),
            "exit_message": job.get("ExitMessage"),
            "ended_at": job.get("ProcessingEndTime"),
            "waited_s": round((clock.now() - current.started_at).total_seconds(), 1),
        }
    )
    if current.status in {"Failed", "Stopped"}:
        raise BenchmarkJobFailed(
            f"benchmark job {name} is {current.status}: FailureReason: {current.failure_reason or '(empty)'}; "
            f"ExitMessage: {current.exit_message or '(empty)'}."
        )
    if current.status in RUNNING and current.waited_s > max_runtime_s(request) + request.spec.wait.poll_max_s:
        raise BenchmarkJobFailed(
            f"benchmark job {name} is still {current.status} after {current.waited_s:.0f} s, past its "
            f"MaxRuntimeInSeconds {max_runtime_s(request)}."
        )
    return current


def collect(request: BenchmarkJobRequest, *, s3: S3Client) -> BenchmarkResult:
    """Read the job's output and keep the execution state's share of it.

    Raises:
        BenchmarkFailed: a shape got no successful response at all.
    """
    if request.job is None:
        raise BenchmarkJobFailed("no benchmark job to collect: StartBenchmarkJob did not record one.")
    detail_uri = f"{request.job.output_uri}{OUTPUT_FILE}"
    output = json.loads(get_text(s3, detail_uri))
    shapes, warm = compact(output)
    require_answers(shapes, f"see {detail_uri}")
    ended = request.job.ended_at or clock.now()
    return BenchmarkResult(
        runner="processing-job",
        endpoint_url=output["environment"]["endpoint_url"],
        shapes=shapes,
        warm_checks=warm,
        detail_uri=detail_uri,
        seconds=round((ended - request.job.started_at).total_seconds(), 3),
    )


def stop(
    request: BenchmarkJobRequest, *, sagemaker: SageMakerClient, settings: Settings
) -> BenchmarkJobStatus:
    """Stop the run's job if it is running (the failure path); a job never created is fine."""
    name = request.plan.job_name
    try:
        job = sagemaker.describe_processing_job(ProcessingJobName=name)
    except ClientError as error:
        if is_not_found(error):
            return job_status(request, settings, "NotCreated")
        raise translate(error, f"describe processing job {name}") from error
    status = job["ProcessingJobStatus"]
    if status == "InProgress":
        with aws_errors(f"stop processing job {name}"):
            sagemaker.stop_processing_job(ProcessingJobName=name)
        status = "Stopping"
    return job_status(request, settings, status).model_copy(
        update={"failure_reason": job.get("FailureReason")}
    )
