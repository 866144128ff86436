"""Benchmark step: measure every shape at every concurrency level."""

from __future__ import annotations

import time
from typing import Any

from workflows.benchmark.client import Invoker
from workflows.benchmark.measure import measure, summarize
from workflows.contracts import BenchmarkRequest, BenchmarkResult, ShapeStats
from workflows.errors import BenchmarkFailed
from workflows.steps.warmup import bodies_for, shapes_of


def benchmark(request: BenchmarkRequest, *, runtime: Any) -> BenchmarkResult:
    """Raises BenchmarkFailed when a shape got no successful response at all."""
    started = time.perf_counter()
    invoker = Invoker(runtime, request.deploy.endpoint_name)
    spec = request.spec.benchmark
    shapes = []
    for shape in shapes_of(spec):
        bodies = bodies_for(shape, spec.seed)
        for concurrency in spec.concurrency:
            measurement = measure(
                invoker.call,
                bodies,
                shape,
                concurrency=concurrency,
                min_duration_s=spec.min_duration_s,
                min_requests=spec.min_requests,
                max_duration_s=spec.max_duration_s,
            )
            stats = summarize(measurement)
            if stats["errors"] == stats["requests"]:
                raise BenchmarkFailed(
                    f"every request for {shape.label} at concurrency {concurrency} failed: {measurement.errors()}."
                )
            shapes.append(
                ShapeStats(
                    batch_size=shape.batch_size,
                    sequence_length=shape.sequence_length,
                    concurrency=concurrency,
                    **stats,
                )
            )
    return BenchmarkResult(shapes=shapes, seconds=round(time.perf_counter() - started, 3))
