"""Warmup step: every shape that will be measured is warmed until its latency is stable."""

from __future__ import annotations

import time
from typing import Any

from workflows.benchmark.client import Invoker
from workflows.benchmark.measure import PAYLOAD_VARIANTS, warm_up
from workflows.benchmark.payloads import Shape, payload
from workflows.contracts import ShapeWarmup, WarmupRequest, WarmupResult
from workflows.errors import WarmupFailed
from workflows.spec import BenchmarkSpec


def shapes_of(benchmark: BenchmarkSpec) -> list[Shape]:
    return [Shape(b, s) for s in benchmark.sequence_lengths for b in benchmark.batch_sizes]


def bodies_for(shape: Shape, seed: int) -> list[bytes]:
    return [payload(shape, seed=seed, variant=v) for v in range(PAYLOAD_VARIANTS)]


def warmup(request: WarmupRequest, *, runtime: Any) -> WarmupResult:
    """Raises WarmupFailed when a shape never answers successfully."""
    started = time.perf_counter()
    invoker = Invoker(runtime, request.deploy.endpoint_name)
    benchmark = request.spec.benchmark
    results = []
    for shape in shapes_of(benchmark):
        outcome = warm_up(
            invoker.call, bodies_for(shape, benchmark.seed), max_requests=benchmark.warmup_max_requests
        )
        if outcome.last_ms == 0.0:
            raise WarmupFailed(
                f"shape {shape.label} on {request.deploy.endpoint_name} failed all {outcome.requests} warmup "
                f"requests: {outcome.errors}. Last error: {outcome.last_error}"
            )
        results.append(
            ShapeWarmup(
                batch_size=shape.batch_size,
                sequence_length=shape.sequence_length,
                requests=outcome.requests,
                first_ms=round(outcome.first_ms, 3),
                last_ms=round(outcome.last_ms, 3),
                stable=outcome.stable,
                timeouts=outcome.timeouts,
            )
        )
    return WarmupResult(shapes=results, seconds=round(time.perf_counter() - started, 3))
