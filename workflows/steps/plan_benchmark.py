"""PlanBenchmark: decide where the load generator runs — this Lambda's sibling or a processing job."""

from __future__ import annotations

from typing import Literal

from workflows.benchmark.figures import OUT_OF_TIME
from workflows.benchmark.run_config import measured_concurrency
from workflows.benchmark.server_side import observability_line
from workflows.benchmark.sizing import MeasurementPlan, plan_lines, plan_measurement
from workflows.contracts import BenchmarkPlan, BenchmarkPlanRequest, Finding
from workflows.hosting.tracing import tracing_line
from workflows.naming import benchmark_job_name, endpoint_traces_log_group
from workflows.spec.pipeline import is_gpu_instance

SAMPLE_COUNT = "sample-count"

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
    measurements = sized(request)
    lines = plan_lines(measurements, shapes=len(request.warmup.shapes), windows=spec.windows)
    if lines:
        lines.append(observability_line(request.spec.hosting.mode))
        traced = tracing_line(request.spec.hosting, endpoint_traces_log_group(request.deploy.endpoint_name))
        if traced:
            lines.append(traced)
    return BenchmarkPlan(
        runner=runner,
        reason=reason,
        planned_s=planned,
        job_name=benchmark_job_name(request.run_id, request.attempt.number, len(request.attempt.history)),
        job_instance_type=spec.job_instance_type,
        lines=lines,
        findings=sample_count_findings(measurements),
    )


def sized(request: BenchmarkPlanRequest) -> list[MeasurementPlan]:
    """Each measurement's plan, from its shape's warm latency (the median of its last warm window)."""
    spec = request.spec.benchmark
    hosting = request.spec.hosting
    workers = int(getattr(hosting, "workers", 1)) * int(getattr(hosting, "instance_count", 1))
    return [
        plan_measurement(
            f"b{warm.batch_size} x {warm.sequence_length}",
            warm_ms=warm.last_ms,
            warm_clients=warm.concurrency,
            workers=workers,
            concurrency=concurrency,
            windows=spec.windows,
            min_duration_s=spec.min_duration_s,
            min_requests=spec.min_requests,
            max_duration_s=spec.max_duration_s,
        )
        for warm in request.warmup.shapes
        if warm.last_ms
        for concurrency in measured_concurrency(request.spec)
    ]


def sample_count_findings(measurements: list[MeasurementPlan]) -> list[Finding]:
    """One warning naming every measurement whose cap cannot reach the n its figures need (none if all can)."""
    short = [m for m in measurements if not m.reaches]
    if not short:
        return []
    longest = max(m.needed_s for m in short)
    return [
        Finding(
            id=SAMPLE_COUNT,
            severity="warning",
            message=(
                f"{len(short)} of {len(measurements)} measurements cannot reach the n their p99 bound needs "
                "within max_duration_s: "
                + "; ".join(f"{m.name} about n={m.expected_n} of {m.target_n}" for m in short)
                + "; they will be reported unstable, with p99 unbounded"
            ),
            fix=f"set benchmark.max_duration_s to at least {longest:.0f} s, or measure fewer shapes",
            evidence="; ".join(
                f"{m.name}: {m.requests_per_s:.1f} requests/s at warm-up, needs {m.needed_s:.0f} s"
                for m in short
            ),
        )
    ]
