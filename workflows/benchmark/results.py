"""What warm-up and the benchmark measured: per-shape figures, the host's utilisation, the cold start.

The pipeline's execution state carries these (``WarmupResult``, ``BenchmarkResult``); reports, sweeps and
the benchmark engine read them without the step requests around them (workflows/contracts.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from workflows.benchmark.routed import RoutedFigures
from workflows.models import Contract

CPU_CEILING_PCT = 90.0
"""CPU at or over this share of the instance's cores, averaged over a window: the shape is CPU-bound."""
GPU_MEMORY_CEILING_PCT = 95.0
"""GPU memory at or over this share: the device is full (the next batch or sequence length may not fit)."""


class Utilisation(Contract):
    """What the host did during one measurement's window: averages over ``started_at``..``ended_at``.

    Every figure is a percentage (CPU of all cores, so up to 100 whatever the core count) and None
    where it was not measured (no GPU, or no datapoint in the window).
    """

    source: Literal["cloudwatch", "local"] = Field(
        description="cloudwatch: the endpoint's /aws/sagemaker/Endpoints metrics; local: the local "
        "serving process group's own /proc figures (not an instance's)."
    )
    cpu_pct: float | None = None
    memory_pct: float | None = None
    gpu_pct: float | None = None
    gpu_memory_pct: float | None = None
    started_at: float = 0.0
    ended_at: float = 0.0

    def ceilings(self) -> list[str]:
        """The limits the window reached, worded for the report (empty: none)."""
        hit: list[str] = []
        if self.cpu_pct is not None and self.cpu_pct >= CPU_CEILING_PCT:
            hit.append(f"CPU {self.cpu_pct:.0f}% >= {CPU_CEILING_PCT:.0f}%")
        if self.gpu_memory_pct is not None and self.gpu_memory_pct >= GPU_MEMORY_CEILING_PCT:
            hit.append(f"GPU memory {self.gpu_memory_pct:.0f}% >= {GPU_MEMORY_CEILING_PCT:.0f}%")
        return hit


class ServerLatency(Contract):
    """The endpoint's own latency over one measurement's kept windows, beside the client's.

    The difference is what lies between the two: the network and SageMaker's front end (the local
    SageMaker's front on the local engine).
    """

    available: bool
    source: str = Field(
        description="Where the figures come from: the container's /metrics (local) or CloudWatch ModelLatency."
    )
    reason: str = ""
    requests: int | None = Field(None, description="Requests the server recorded in the window.")
    p50_ms: float | None = None
    p99_ms: float | None = None
    bucket_resolution: float | None = Field(
        None, description="Relative width of the histogram's widest bucket: the quantiles' precision."
    )
    client_p50_ms: float | None = None
    client_p99_ms: float | None = None
    difference_p50_ms: float | None = None
    difference_p99_ms: float | None = None
    difference_is: str = ""


class ShapeStats(Contract):
    """One shape at one concurrency: the figures of the last three (stable) windows.

    Windows and latency samples stay in the detail file (``BenchmarkResult.detail_uri``): the
    execution state is capped at 256 KB.
    """

    batch_size: int
    sequence_length: int | Literal["natural"]
    concurrency: int = 1
    requests: int
    errors: int
    errors_by_kind: dict[str, int] = Field(default_factory=dict)
    retries: int = 0
    duration_s: float
    p50_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    mean_ms: float | None
    std_ms: float | None
    p50_ci_ms: list[float | None] | None = Field(
        None, description="Distribution-free 95% interval of p50 [low, high]; null: n cannot bound it."
    )
    p90_ci_ms: list[float | None] | None = None
    p99_ci_ms: list[float | None] | None = Field(
        None, description="No upper bound (null) from fewer than 299 successful samples."
    )
    samples_per_s: float
    requests_per_s: float
    stable: bool = Field(
        description="The stopping rule held: min_requests, min_duration_s and windows agreeing."
    )
    stop_reason: str = ""
    unstable_reason: str = Field("", description="Each part of the stopping rule missed, when not stable.")
    started_at: float = Field(0.0, description="Epoch seconds: start of the windows kept.")
    ended_at: float = Field(0.0, description="Epoch seconds: end of the windows kept.")
    utilisation: Utilisation | None = Field(
        None, description="The host over started_at..ended_at; None where it was not read."
    )
    server: ServerLatency | None = Field(
        None, description="The server's own p50/p99 over started_at..ended_at; None where it was not read."
    )


class ShapeWarmup(Contract):
    """How one shape was warmed: what it took, and its first (cold) call."""

    batch_size: int
    sequence_length: int | Literal["natural"]
    concurrency: int = 1
    requests: int
    successes: int = 0
    first_ms: float
    first_error: str | None = None
    time_to_first_success_s: float | None = None
    last_ms: float | None
    stable: bool
    stop_reason: str = ""
    timeouts: int = 0
    errors: dict[str, int] = Field(default_factory=dict)
    retries: int = 0
    seconds: float = 0.0


class ColdStart(Contract):
    """The first request after deploy (or after scale-from-zero), reported apart from warm figures."""

    shape: str
    latency_ms: float
    error: str | None = None
    retries: int = Field(
        0, description="Retries before the first answer (F12: 'no capacity' at zero copies)."
    )
    time_to_first_success_s: float | None = None


class WarmupResult(Contract):
    shapes: list[ShapeWarmup]
    cold_start: ColdStart | None = None
    seconds: float
    served_by: dict[str, str] | None = Field(
        None,
        description="The execution provider the endpoint's answers name (F36), with the note of a GPU "
        "artifact served on CPU; None when the serving code does not say.",
    )
    routed: ShapeWarmup | None = Field(
        None, description="A run across Regions: the first shape warmed through its router too."
    )


class BenchmarkResult(Contract):
    runner: Literal["lambda", "processing-job", "cli"] = "lambda"
    endpoint_url: str = ""
    shapes: list[ShapeStats]
    warm_checks: list[ShapeWarmup] = Field(default_factory=list)
    detail_uri: str = Field("", description="Every figure: windows, latency samples, environment, policy.")
    seconds: float
    routed: RoutedFigures | None = Field(
        None,
        description="A run across Regions: the routed shape beside direct InvokeEndpoint (benchmark/routed.py).",
    )
    fleet: dict[str, Any] = Field(
        default_factory=dict,
        description="Pooled endpoints: instances per type before and after the measurement, the types "
        "that served, and whether they were mixed (workflows/hosting/pools.py fleet).",
    )
