"""DescribeBenchmarkJob: one poll of the benchmark processing job."""

from __future__ import annotations

from typing import Any

from workflows import clock
from workflows.aws.clients import aws_errors
from workflows.benchmark.job import RUNNING, job_status, max_runtime_s
from workflows.contracts import BenchmarkJobRequest, BenchmarkJobStatus
from workflows.errors import BenchmarkJobFailed
from workflows.settings import Settings


def describe(request: BenchmarkJobRequest, *, sagemaker: Any, settings: Settings) -> BenchmarkJobStatus:
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
