"""The benchmark as a SageMaker processing job: its inputs, outputs, request and status.

The steps StartBenchmarkJob, DescribeBenchmarkJob, CollectBenchmarkResults and StopBenchmarkJob
(``workflows/steps/``) share what is here.

The job runs ``artifacts/benchmark_job/run.py`` with the SAME engine modules as the Lambda
(``workflows.benchmark.JOB_MODULES``), uploaded as the job's code input; its config and its
output are files (``/opt/ml/processing/input/config``, ``/opt/ml/processing/output``), so the
script never calls S3 itself. The code input also carries botocore's model of the inference router
runtime (``AWS_DATA_PATH``): a run across Regions measures its router from the job, whose image's
botocore may predate that service. The state machine polls it with Wait + describe + Choice (no
``.sync``), and every failure on this path stops the job before the run is diagnosed.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

import botocore.loaders

import workflows
from workflows import clock, naming
from workflows.aws.clients import ROUTER_RUNTIME_SERVICE
from workflows.aws.storage import put_text, upload_file
from workflows.benchmark import JOB_MODULES
from workflows.contracts import BenchmarkJobRequest, BenchmarkJobStatus
from workflows.hosting.network import processing_security
from workflows.hosting.polling import next_wait_seconds
from workflows.images.table import HF_INFERENCE, image_uri
from workflows.janitor.lifetime import runtime_limit_s
from workflows.settings import Settings

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

PROCESSING = "/opt/ml/processing"
CODE_DIR = f"{PROCESSING}/input/code"
CONFIG_DIR = f"{PROCESSING}/input/config"
OUTPUT_DIR = f"{PROCESSING}/output/benchmark"
CONFIG_FILE = "job.json"
OUTPUT_FILE = "benchmark.json"
ENTRY = "run.py"
MODELS = "botocore-data"
"""Under the code input: service models the job's botocore reads before its own (``AWS_DATA_PATH``)."""
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
    return uris + upload_router_model(s3, f"{prefix}code/{MODELS}/")


def upload_router_model(s3: S3Client, prefix: str) -> list[str]:
    """The installed botocore's model of the router runtime (its service and endpoint rules), uncompressed
    (a botocore before 1.32 reads no ``.json.gz``), at ``<service>/<api version>/`` as botocore lays it out."""
    loader = botocore.loaders.Loader()
    version = loader.determine_latest_version(ROUTER_RUNTIME_SERVICE, "service-2")
    return [
        put_text(
            s3,
            f"{prefix}{ROUTER_RUNTIME_SERVICE}/{version}/{kind}.json",
            json.dumps(loader.load_service_model(ROUTER_RUNTIME_SERVICE, kind, version)),
            "application/json",
        )
        for kind in ("service-2", "endpoint-rule-set-1")
    ]


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

    security = processing_security(request.spec)
    cluster: dict[str, Any] = {
        "InstanceCount": 1,
        "InstanceType": request.plan.job_instance_type,
        "VolumeSizeInGB": VOLUME_GB,
    }
    outputs: dict[str, Any] = {}
    if "VolumeKmsKeyId" in security:
        cluster["VolumeKmsKeyId"] = security["VolumeKmsKeyId"]
        outputs["KmsKeyId"] = security["OutputKmsKeyId"]
    network = {"NetworkConfig": security["NetworkConfig"]} if "NetworkConfig" in security else {}
    return {
        "ProcessingJobName": request.plan.job_name,
        "ProcessingResources": {"ClusterConfig": cluster},
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
            ],
            **outputs,
        },
        **network,
        "RoleArn": settings.sagemaker_role_arn,
        "Environment": {
            "PYTHONUNBUFFERED": "1",
            "DEPLOYBENCH_RUN_ID": request.run_id,
            "AWS_DATA_PATH": f"{CODE_DIR}/{MODELS}",
        },
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
        fleet_before=request.job.fleet_before if request.job else {},
    )
