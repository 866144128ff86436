"""PlanBenchmark: decide where the load generator runs — this Lambda's sibling or a processing job."""

from __future__ import annotations

from typing import Literal

from workflows.benchmark.figures import OUT_OF_TIME
from workflows.benchmark.run_config import measured_concurrency
from workflows.contracts import BenchmarkPlan, BenchmarkPlanRequest
from workflows.naming import benchmark_job_name
from workflows.preflight.samples import check_sample_budget
from workflows.spec.pipeline import is_gpu_instance

# The benchmark Lambda has 15 minutes; 'auto' leaves it runs that plan for 12 at most.
AUTO_LAMBDA_LIMIT_S = 720.0


def plan(request: BenchmarkPlanRequest) -> BenchmarkPlan:
    """``benchmark.runner`` decides, or for 'auto': a processing job for GPU endpoints (the load
    generator sits next to the endpoint; GPU runs are long), for a planned measurement over 12
    minutes, and when warmup ran out of time (the job finishes warming without a limit)."""
    spec = request.spec.benchmark
    planned = spec.planned_seconds()
    instance_type = request.deploy.instance_type
    unwarmed = [
        f"b{w.batch_size}/{w.sequence_length}"
        for w in request.warmup.shapes
        if not w.stable and w.stop_reason in {OUT_OF_TIME, "max_seconds"}
    ]
    runner: Literal["lambda", "processing-job"]
    if spec.runner == "lambda":
        runner, reason = "lambda", "benchmark.runner is 'lambda'"
    elif spec.runner == "processing-job":
        runner, reason = "processing-job", "benchmark.runner is 'processing-job'"
    elif is_gpu_instance(instance_type):
        runner, reason = "processing-job", f"GPU instance type {instance_type}"
    elif planned > AUTO_LAMBDA_LIMIT_S:
        runner = "processing-job"
        reason = f"planned measurement up to {planned:.0f} s exceeds {AUTO_LAMBDA_LIMIT_S:.0f} s"
    elif unwarmed:
        runner, reason = "processing-job", f"warmup did not finish for {', '.join(unwarmed)}"
    else:
        runner = "lambda"
        reason = f"CPU instance type {instance_type}, planned measurement up to {planned:.0f} s"
    budget = check_sample_budget(
        latency_ms={
            f"b{w.batch_size}/{w.sequence_length}": w.last_ms for w in request.warmup.shapes if w.last_ms
        },
        concurrency=min(measured_concurrency(request.spec)),
        min_duration_s=spec.min_duration_s,
        min_requests=spec.min_requests,
    )
    return BenchmarkPlan(
        runner=runner,
        reason=reason,
        planned_s=planned,
        job_name=benchmark_job_name(request.run_id, request.attempt.number, len(request.attempt.history)),
        job_instance_type=spec.job_instance_type,
        findings=budget,
    )
