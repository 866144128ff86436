"""What the benchmark steps keep of the engine's output: the typed warmup outcome, each shape's
warmup and cold start, and the compact figures the execution state carries.

Used by WarmUpShapes, RunBenchmark, CollectBenchmarkResults, PlanBenchmark and ``deploybench bench``.
The engine itself (``JOB_MODULES``) returns plain JSON data, since the job's image has no pydantic;
the outcome is typed here, where the steps read it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from workflows.benchmark.results import ColdStart, ShapeStats, ShapeWarmup
from workflows.errors import BenchmarkFailed

DETAIL_FILE = "benchmark.json"
# A shape WarmUpShapes left unwarmed because its Lambda ran out of time (the plan moves it to a job).
OUT_OF_TIME = "out_of_time"


class WarmupOutcome(BaseModel):
    """One shape's warmup as ``workflows.benchmark.warmup.warm_up`` reports it."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    concurrency: int
    window: int = 0
    requests: int
    successes: int = 0
    first_ms: float
    first_error: str | None = None
    first_retries: int = 0
    time_to_first_success_s: float | None = None
    last_ms: float | None = None
    window_medians_ms: list[float] = Field(default_factory=list)
    stable: bool
    stop_reason: str = ""
    timeouts: int = 0
    errors: dict[str, int] = Field(default_factory=dict)
    retries: int = 0
    last_error: str | None = None
    seconds: float = 0.0

    @classmethod
    def of(cls, data: dict[str, Any]) -> WarmupOutcome:
        """The engine's plain record (``warm_up``'s return, or an entry of its output's ``warm_checks``)."""
        return cls.model_validate(data)


def warmup_record(
    outcome: WarmupOutcome, *, batch_size: int, sequence_length: int | Literal["natural"]
) -> ShapeWarmup:
    """A shape's warmup as the execution state carries it (window medians stay in the detail)."""
    fields = outcome.model_dump(include=set(ShapeWarmup.model_fields))
    return ShapeWarmup(batch_size=batch_size, sequence_length=sequence_length, **fields)


def cold_start_of(shape_label: str, outcome: WarmupOutcome) -> ColdStart:
    """The first request of a warmup, which went to a cold shape (or a cold endpoint)."""
    return ColdStart(
        shape=shape_label,
        latency_ms=outcome.first_ms,
        error=outcome.first_error,
        retries=outcome.first_retries,
        time_to_first_success_s=outcome.time_to_first_success_s,
    )


def shape_warmups(output: dict[str, Any]) -> list[ShapeWarmup]:
    """The warm checks of an engine output, each shape's outcome typed."""
    return [
        warmup_record(WarmupOutcome.of(w), batch_size=w["batch_size"], sequence_length=w["sequence_length"])
        for w in output["warm_checks"]
    ]


def compact(output: dict[str, Any]) -> tuple[list[ShapeStats], list[ShapeWarmup]]:
    """The execution state's share of an engine output: figures without windows and samples."""
    shapes = [
        ShapeStats(**{k: v for k, v in m.items() if k in ShapeStats.model_fields})
        for m in output["measurements"]
    ]
    return shapes, shape_warmups(output)


def require_answers(shapes: list[ShapeStats], where: str) -> None:
    """Raises BenchmarkFailed when a measurement got no successful response at all."""
    for s in shapes:
        if s.requests == 0 or s.errors == s.requests:
            raise BenchmarkFailed(
                f"every request for b{s.batch_size}/{s.sequence_length} at concurrency {s.concurrency} "
                f"failed ({where}): {s.errors_by_kind or 'no request completed'}."
            )
