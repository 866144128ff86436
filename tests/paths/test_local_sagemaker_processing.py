"""Processing jobs on the local SageMaker: the container entry as a local process, S3 in and out."""

from __future__ import annotations

import json
import textwrap
from typing import Any

from tests.support.local_sagemaker import ROLE, wait_for
from workflows.local.engine import BUCKET, LocalEngine

JOB_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import boto3
    data = open("/opt/ml/processing/input/data/numbers.json".replace("/opt/ml/", os.environ["ML_ROOT"])).read()
    numbers = json.loads(data)
    if "--fail" in sys.argv:
        print("the job failed on purpose", file=sys.stderr)
        sys.exit(3)
    endpoints = boto3.client("sagemaker").list_endpoints()["Endpoints"]
    out = sys.argv[sys.argv.index("--out") + 1]
    with open(os.path.join(out, "result.json"), "w") as handle:
        json.dump({"sum": sum(numbers), "endpoints": len(endpoints), "runtime": os.environ["AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME"]}, handle)
    """
)


def start_job(engine: LocalEngine, name: str, *arguments: str) -> None:
    s3 = engine.client("s3")
    s3.put_object(Bucket=BUCKET, Key="jobs/code/job.py", Body=JOB_SCRIPT.encode())
    s3.put_object(Bucket=BUCKET, Key="jobs/data/numbers.json", Body=b"[1, 2, 3]")
    engine.client("sagemaker").create_processing_job(
        ProcessingJobName=name,
        RoleArn=ROLE,
        ProcessingResources={"ClusterConfig": {"InstanceCount": 1, "InstanceType": "ml.c6i.xlarge", "VolumeSizeInGB": 10}},
        StoppingCondition={"MaxRuntimeInSeconds": 120},
        AppSpecification={
            "ImageUri": "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-inference:2.6.0-cpu-py312",
            "ContainerEntrypoint": ["python3", "/opt/ml/processing/input/code/job.py"],
            "ContainerArguments": ["--out", "/opt/ml/processing/output", *arguments],
        },
        Environment={"ML_ROOT": "/opt/ml/"},
        ProcessingInputs=[
            {"InputName": "code", "S3Input": {"S3Uri": f"s3://{BUCKET}/jobs/code/", "LocalPath": "/opt/ml/processing/input/code", "S3DataType": "S3Prefix", "S3InputMode": "File"}},
            {"InputName": "data", "S3Input": {"S3Uri": f"s3://{BUCKET}/jobs/data", "LocalPath": "/opt/ml/processing/input/data", "S3DataType": "S3Prefix", "S3InputMode": "File"}},
        ],
        ProcessingOutputConfig={
            "Outputs": [{"OutputName": "out", "S3Output": {"S3Uri": f"s3://{BUCKET}/jobs/{name}/out", "LocalPath": "/opt/ml/processing/output", "S3UploadMode": "EndOfJob"}}]
        },
    )  # fmt: skip


def job_settled(engine: LocalEngine, name: str) -> list[dict[str, Any]]:
    sagemaker = engine.client("sagemaker")
    return wait_for(
        lambda: sagemaker.describe_processing_job(ProcessingJobName=name),
        lambda d: d["ProcessingJobStatus"] not in {"InProgress", "Stopping"},
        timeout_s=120,
    )


def test_processing_job_runs_its_entrypoint_with_inputs_and_outputs_mapped(engine: LocalEngine) -> None:
    # When a job's script reads its /opt/ml/processing input and writes its output
    start_job(engine, "job-ok")
    seen = job_settled(engine, "job-ok")
    # Then it went InProgress -> Completed, and its output is in S3
    assert seen[0]["ProcessingJobStatus"] == "InProgress"
    assert seen[-1]["ProcessingJobStatus"] == "Completed", seen[-1].get("FailureReason")
    assert seen[-1]["ProcessingEndTime"] >= seen[-1]["ProcessingStartTime"]
    body = engine.client("s3").get_object(Bucket=BUCKET, Key="jobs/job-ok/out/result.json")["Body"].read()
    result = json.loads(body)
    # And it reached the local SageMaker through the endpoint URL it was given
    assert result["sum"] == 6 and result["endpoints"] == 0
    assert result["runtime"].startswith("http://127.0.0.1:")


def test_processing_job_failure_and_stop_are_reported_like_aws(engine: LocalEngine) -> None:
    sagemaker = engine.client("sagemaker")
    # When a job exits non-zero
    start_job(engine, "job-fails", "--fail")
    failed = job_settled(engine, "job-fails")[-1]
    # Then it is Failed with a reason, and its output's tail as ExitMessage
    assert failed["ProcessingJobStatus"] == "Failed"
    assert failed["FailureReason"].startswith("AlgorithmError:") and "exit code 3" in failed["FailureReason"]
    assert "the job failed on purpose" in failed["ExitMessage"]
    # When a long job is stopped
    sagemaker.create_processing_job(
        ProcessingJobName="job-sleeps",
        RoleArn=ROLE,
        ProcessingResources={
            "ClusterConfig": {"InstanceCount": 1, "InstanceType": "ml.c6i.xlarge", "VolumeSizeInGB": 10}
        },
        AppSpecification={
            "ImageUri": "image",
            "ContainerEntrypoint": ["python3", "-c", "import time; time.sleep(300)"],
        },
    )
    sagemaker.stop_processing_job(ProcessingJobName="job-sleeps")
    seen = job_settled(engine, "job-sleeps")
    # Then it went Stopping -> Stopped, with its process gone
    assert seen[-1]["ProcessingJobStatus"] == "Stopped"
    assert engine.sagemaker is not None
    process = engine.sagemaker.jobs["job-sleeps"].process
    assert process is not None and process.poll() is not None
