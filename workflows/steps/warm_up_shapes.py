"""WarmUpShapes: every shape that will be measured is warmed until its latency is stable.

The warmup actually used (requests, time, first-call latency, timeouts, stability) is returned
for the result; the first request of the first shape is the endpoint's cold start after deploy.
A Lambda has 15 minutes: shapes left when its time runs out are recorded as not warmed, and the
benchmark plan then moves the measurement to a processing job, which warms them without a limit.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from workflows.benchmark.figures import OUT_OF_TIME, WarmupOutcome, cold_start_of, warmup_record
from workflows.benchmark.payloads import bodies_for
from workflows.benchmark.results import ColdStart, ShapeWarmup, WarmupResult
from workflows.benchmark.routed import router_call
from workflows.benchmark.run_config import engine_config, make_invoker
from workflows.benchmark.warmup import warm_up
from workflows.contracts import WarmupRequest
from workflows.errors import WarmupFailed
from workflows.gpu.served_by import served_by

if TYPE_CHECKING:
    from types_boto3_sagemaker_runtime import SageMakerRuntimeClient
MIN_SHAPE_BUDGET_S = 5.0


def warmup(
    request: WarmupRequest,
    *,
    runtime: SageMakerRuntimeClient,
    time_budget_s: float | None = None,
    router_runtime: Any = None,
) -> WarmupResult:
    """Warm every shape within ``time_budget_s`` (the caller's remaining time, if limited); a run across
    Regions warms the routed path too (the first shape through ``request.router``, ``router_runtime``).

    Raises:
        WarmupFailed: a shape never answered successfully (its errors and last message quoted).
    """
    started = time.perf_counter()
    config = engine_config(request.spec, request.deploy.endpoint_name, request.deploy.target)
    invoker = make_invoker(runtime, config, time_budget_s=time_budget_s)
    results: list[ShapeWarmup] = []
    cold_start: ColdStart | None = None
    for shape in config.shapes():
        left = None if time_budget_s is None else time_budget_s - (time.perf_counter() - started)
        if left is not None and left < MIN_SHAPE_BUDGET_S:
            results.append(
                ShapeWarmup(
                    batch_size=shape.batch_size,
                    sequence_length=shape.sequence_length,
                    concurrency=config.warmup_concurrency,
                    requests=0,
                    first_ms=0.0,
                    last_ms=None,
                    stable=False,
                    stop_reason=OUT_OF_TIME,
                )
            )
            continue
        outcome = WarmupOutcome.of(
            warm_up(
                invoker.call,
                bodies_for(shape, config.seed),
                concurrency=config.warmup_concurrency,
                max_requests=config.warmup_max_requests,
                max_seconds=config.warmup_max_s if left is None else min(config.warmup_max_s, left),
            )
        )
        if outcome.successes == 0:
            raise WarmupFailed(
                f"shape {shape.label} on {request.deploy.endpoint_name} failed all {outcome.requests} warmup "
                f"requests: {outcome.errors}. Last error: {outcome.last_error}"
            )
        if cold_start is None:
            cold_start = cold_start_of(shape.label, outcome)
        results.append(
            warmup_record(outcome, batch_size=shape.batch_size, sequence_length=shape.sequence_length)
        )
    left = None if time_budget_s is None else time_budget_s - (time.perf_counter() - started)
    # One more call, to a warm endpoint, asks which execution provider answers (F36).
    provider = (
        served_by(runtime, request.deploy.endpoint_name, request.deploy.target)
        if cold_start is not None and (left is None or left >= MIN_SHAPE_BUDGET_S)
        else None
    )
    routed = None
    if (
        request.router is not None
        and router_runtime is not None
        and (left is None or left >= MIN_SHAPE_BUDGET_S)
    ):
        routed = warm_routed(request, config, router_runtime, left)
    return WarmupResult(
        shapes=results,
        cold_start=cold_start,
        seconds=round(time.perf_counter() - started, 3),
        served_by=provider,
        routed=routed,
    )


def warm_routed(request: WarmupRequest, config: Any, router_runtime: Any, left: float | None) -> ShapeWarmup:
    """The first shape through the run's router until its latency is stable, as a direct shape is warmed.

    Raises:
        WarmupFailed: the router never answered successfully.
    """
    router = request.router
    if router is None:
        raise ValueError("warming the routed path needs the run's router")
    shape = config.shapes()[0]
    outcome = WarmupOutcome.of(
        warm_up(
            router_call(router_runtime, router.name, router.routing_target),
            bodies_for(shape, config.seed),
            concurrency=1,
            max_requests=config.warmup_max_requests,
            max_seconds=config.warmup_max_s if left is None else min(config.warmup_max_s, left),
        )
    )
    if outcome.successes == 0:
        raise WarmupFailed(
            f"shape {shape.label} through router {router.name} failed all {outcome.requests} warmup "
            f"requests: {outcome.errors}. Last error: {outcome.last_error}"
        )
    return warmup_record(outcome, batch_size=shape.batch_size, sequence_length=shape.sequence_length)
