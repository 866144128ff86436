"""The one benchmark run: for every shape, warm until stable, then measure at every concurrency.

The benchmark Lambda, the processing job's script and ``deploybench bench`` all call ``run`` with
an ``EngineConfig``; the job receives that config as JSON (``to_dict``/``from_dict``).
"""

from __future__ import annotations

import platform
import socket
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from workflows.benchmark.client import Invoker
from workflows.benchmark.host import cpu_summary
from workflows.benchmark.measure import measure
from workflows.benchmark.payloads import SequenceLength, Shape, bodies_for, shapes_of
from workflows.benchmark.server_side import MetricsProbe
from workflows.benchmark.sizing import Windows
from workflows.benchmark.warmup import warm_up

ENGINE_VERSION = 2
CLIENT_KIND = "sigv4-http-keepalive"


@dataclass(frozen=True)
class EngineConfig:
    """Everything a benchmark run needs besides the client."""

    endpoint_name: str
    mode: str
    batch_sizes: list[int]
    sequence_lengths: list[SequenceLength]
    concurrency: list[int]
    min_duration_s: float
    min_requests: int
    max_duration_s: float
    warmup_max_requests: int
    warmup_max_s: float
    warmup_concurrency: int
    seed: int = 0
    windows: Windows = "auto"
    target: dict[str, str] = field(default_factory=dict)

    def shapes(self) -> list[Shape]:
        return shapes_of(self.batch_sizes, self.sequence_lengths)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EngineConfig:
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown engine settings {sorted(unknown)}; expected {sorted(known)}")
        return cls(**data)


def environment(invoker: Invoker, runner: str) -> dict[str, Any]:
    """Where the load came from: the figures include this client and this network path."""
    return {
        "engine_version": ENGINE_VERSION,
        "client": CLIENT_KIND,
        "runner": runner,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "host": socket.gethostname(),
        "cpu": cpu_summary(),
        "endpoint_url": invoker.endpoint_url,
    }


def run(
    invoker: Invoker,
    config: EngineConfig,
    *,
    runner: str,
    progress: Callable[[str], None] = lambda line: None,
) -> dict[str, Any]:
    """Warm and measure every shape; returns warm checks and measurements (plain JSON data).

    Never raises for failed requests: they are counted by kind, and callers decide what a shape
    with no successful response means.
    """
    started = time.time()
    # SageMaker's own figures are read from CloudWatch after the run; the local engine's from its containers.
    probe = MetricsProbe.for_endpoint(invoker.endpoint_url, config.endpoint_name, config.target)
    warm_checks: list[dict[str, Any]] = []
    measurements: list[dict[str, Any]] = []
    for shape in config.shapes():
        bodies = bodies_for(shape, config.seed)
        warm = warm_up(
            invoker.call,
            bodies,
            concurrency=config.warmup_concurrency,
            max_requests=config.warmup_max_requests,
            max_seconds=config.warmup_max_s,
        )
        warm_checks.append({"batch_size": shape.batch_size, "sequence_length": shape.sequence_length, **warm})
        progress(
            f"{shape.label}: warm after {warm['requests']} requests ({'stable' if warm['stable'] else warm['stop_reason']})"
        )
        for concurrency in config.concurrency:
            figures = measure(
                invoker.call,
                bodies,
                shape,
                concurrency=concurrency,
                min_duration_s=config.min_duration_s,
                min_requests=config.min_requests,
                max_duration_s=config.max_duration_s,
                seed=config.seed,
                windows_by=config.windows,
                probe=probe,
            )
            measurements.append(figures)
            progress(
                f"{shape.label} c{concurrency}: p50 {figures['p50_ms']} ms, p99 {figures['p99_ms']} ms, "
                f"{figures['samples_per_s']} samples/s, errors {figures['errors']}"
            )
    return {
        "environment": environment(invoker, runner),
        "endpoint_name": config.endpoint_name,
        "mode": config.mode,
        "policy": invoker.policy.to_dict(),
        "config": config.to_dict(),
        "started_at": round(started, 3),
        "ended_at": round(time.time(), 3),
        "warm_checks": warm_checks,
        "measurements": measurements,
    }
