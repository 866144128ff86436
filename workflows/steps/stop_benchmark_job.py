"""StopBenchmarkJob: stop the benchmark job if it still runs (the failure path)."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from workflows.aws.clients import aws_errors, is_not_found, translate
from workflows.benchmark.job import job_status
from workflows.contracts import BenchmarkJobRequest, BenchmarkJobStatus
from workflows.settings import Settings


def stop(request: BenchmarkJobRequest, *, sagemaker: Any, settings: Settings) -> BenchmarkJobStatus:
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
