"""How long a run may still legally last once it has created something: when its resources expire.

The janitor deletes a managed resource past its ``deploybench:expires-at`` tag. A fixed time to live
either reaps a live run (a spec with a 12-hour wait budget, four deploy attempts and reruns lasts far
longer than 6 hours) or leaves a leak billing for a day. So each resource expires at its creation time
plus ``run_lifetime(spec)``: the longest path through the deploy pipeline that the spec allows from
any moment of the run on, plus a margin. The figures come from where they are decided: the spec's
budgets and bounds, each function's timeout (``state_machines.FUNCTIONS``), the teardown retry policy
of the definition and the benchmark job's StoppingCondition.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from workflows.backoff import Backoff
from workflows.remediation import RETRY_MAX_WAIT_S
from workflows.spec.pipeline import BenchmarkSpec, RunSpec

MARGIN = timedelta(hours=1)
"""Covers what the bound does not count: retries of transient Lambda and service errors (seconds
each, rarely more than one per step), Step Functions scheduling, clock skew between services."""

# Provisioning an instance and pulling the image take minutes before the benchmark job's script starts.
START_ALLOWANCE_S = 900


def runtime_limit_s(benchmark: BenchmarkSpec, planned_s: float) -> int:
    """StoppingCondition: warm every shape to its limit, measure to the plan, plus the start."""
    shapes = len(benchmark.batch_sizes) * len(benchmark.sequence_lengths)
    return int(START_ALLOWANCE_S + shapes * benchmark.warmup_max_s + planned_s)


def _timeouts() -> dict[str, int]:
    from state_machines import FUNCTIONS

    return {function.placeholder.removesuffix("FunctionArn"): function.timeout_s for function in FUNCTIONS}


def _retry_intervals_s(retrier: dict[str, Any]) -> float:
    """Every wait of one Step Functions retrier: IntervalSeconds x BackoffRate^n, each capped."""
    schedule = Backoff(
        float(retrier.get("IntervalSeconds", 1)),
        float(retrier.get("BackoffRate", 2.0)),
        float(retrier.get("MaxDelaySeconds", float("inf"))),
    )
    return schedule.total_s(int(retrier.get("MaxAttempts", 3)))


def _teardown_s(lambda_s: dict[str, int]) -> float:
    """TeardownEndpoint or TeardownAfterFailure: every invocation its policy allows, and the waits
    between them (ResourceBusy: a stalled endpoint is undeletable until it fails, F06: ~65 min)."""
    from state_machines.deploy_pipeline import teardown_retry

    busy = max(teardown_retry(), key=_retry_intervals_s)
    invocations = 1 + int(busy.get("MaxAttempts", 3))
    return _retry_intervals_s(busy) + invocations * lambda_s["TeardownEndpoint"] + lambda_s["WriteReport"]


def run_lifetime(spec: RunSpec) -> timedelta:
    """The longest a run of ``spec`` may still last at any point after it created a resource.

    Counted as the sum of the longest legal path, each Lambda step at its function's timeout:

    - every deploy attempt (``remediation.max_total_attempts``; 1 with remediation off) deploys,
      waits up to ``wait.timeout_min`` plus one poll gap (the poll that finds the budget spent comes
      up to ``wait.poll_max_s`` late), warms up, benchmarks, then takes the failure path into the next
      attempt: stop the job, diagnose, plan, remove the failed attempt, repack and preflight;
    - the benchmark is the longer runner: the Lambda, or the processing job (plan, start, its
      MaxRuntimeInSeconds from the spec's shapes, ``warmup_max_s`` and planned measurement, one poll
      gap, the last poll, collect);
    - every rerun on the same endpoint the spec allows (``remediation.warm_shapes`` and
      ``retry_with_backoff``, bounded for the whole run) waits at most RETRY_MAX_WAIT_S, warms up,
      benchmarks and takes the failure path again;
    - teardown with all its ResourceBusy retries, then the report;
    - plus MARGIN.

    Convert and the first pack come before any resource exists and are not counted; a repack is.
    """
    lambda_s = _timeouts()
    remediation = spec.remediation
    deploys = remediation.max_total_attempts if remediation.enabled else 1
    reruns = remediation.warm_shapes + remediation.retry_with_backoff if remediation.enabled else 0
    poll_gap = spec.wait.poll_max_s
    job_s = (
        lambda_s["PlanBenchmark"]
        + lambda_s["StartBenchmarkJob"]
        + runtime_limit_s(spec.benchmark, spec.benchmark.planned_seconds())
        + poll_gap
        + lambda_s["DescribeBenchmarkJob"]
        + lambda_s["CollectBenchmarkResults"]
    )
    benchmark_s = max(lambda_s["PlanBenchmark"] + lambda_s["RunBenchmark"], job_s)
    failure_s = lambda_s["StopBenchmarkJob"] + lambda_s["DiagnoseFailure"] + lambda_s["PlanRemediation"]
    # The budget covers both polling loops (the endpoint, then its components): one last poll of either.
    wait_s = (
        spec.wait.timeout_min * 60
        + poll_gap
        + max(lambda_s["DescribeEndpoint"], lambda_s["PlaceInferenceComponents"])
    )
    attempt_s = (
        lambda_s["DeployEndpoint"]
        + wait_s
        + lambda_s["WarmUpShapes"]
        + benchmark_s
        + failure_s
        + lambda_s["RemoveFailedAttempt"]
        + lambda_s["PackArtifact"]
        + lambda_s["RunPreflight"]
    )
    rerun_s = RETRY_MAX_WAIT_S + lambda_s["WarmUpShapes"] + benchmark_s + failure_s
    total_s = deploys * attempt_s + reruns * rerun_s + _teardown_s(lambda_s)
    return timedelta(seconds=total_s) + MARGIN
