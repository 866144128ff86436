"""What a sweep's recommendation holds: its points, the ranked runs, the test of the first two, the decision.

The contracts ``workflows.sweeps.recommend`` fills and ``workflows.sweeps.recommend_render`` writes out,
with how a point's price reads (by the hour on instances; serverless has no hourly price).
"""

from __future__ import annotations

from pydantic import Field

from workflows.contracts import Contract
from workflows.sweeps.spec import RecommendPolicy


class Point(Contract):
    """One run at one concurrency, at the batch size served."""

    run_id: str
    key: str
    mode: str
    instance_type: str
    concurrency: int
    sequence_lengths: list[int | str]
    p50_ms: float | None
    p99_ms: float | None
    samples_per_s: float
    cost_per_million: float | None
    meets_target: bool
    stable: bool = Field(True, description="Every shape of the point was stable (its stopping rule held).")
    reason: str = Field("", description="Why the point misses the target (empty when it meets it).")
    n: int | None = Field(None, description="Fewest successful samples among the point's shapes.")
    p50_ci_ms: list[float | None] | None = Field(
        None, description="95% interval of the slowest shape's median (None: not recorded)."
    )
    p99_ci_ms: list[float | None] | None = Field(
        None, description="95% interval of the slowest shape's p99; a null bound n cannot give."
    )
    shared_host: bool = Field(False, description="Measured locally: the host's CPUs were shared.")


class Ranked(Contract):
    """A run's best point, with its rank (None when no point of the run meets the target)."""

    rank: int | None
    recommended: bool
    point: Point | None
    run_id: str
    key: str
    reason: str = ""


class Separation(Contract):
    """Whether the first two ranked runs differ beyond their intervals."""

    first_run_id: str
    second_run_id: str
    distinguishable: bool | None = Field(description="None: an interval was not recorded.")
    n: int | None = None
    n_to_separate: int | None = Field(
        None, description="About the samples per run that would separate their medians (None: equal medians)."
    )


class PoolType(Contract):
    """One instance type of the proposed pools, with the figures it earned its priority by."""

    priority: int
    instance_type: str
    device: str
    run_id: str
    concurrency: int
    p99_ms: float | None
    samples_per_s: float
    cost_per_million: float | None


class PoolOrder(Contract):
    """The InstancePools order a sweep proposes: the types that met the target, cheapest per 1M first."""

    mode: str
    pools: list[PoolType]
    hosting: dict[str, object] = Field(description="The `hosting` block to paste into a run spec.")
    left_out: list[str] = Field(
        default_factory=list, description="Types that met the target but are not pooled, and why."
    )


class Recommendation(Contract):
    policy: RecommendPolicy
    recommended_run_id: str | None
    ranked: list[Ranked]
    points: list[Point] = Field(description="Every run at every concurrency, for the side-by-side table.")
    local: bool = Field(description="Some run was measured locally: the ranking is an estimate.")
    separation: Separation | None = None
    decision: str = Field("", description="The sweep's decision in one sentence.")
    pool_order: PoolOrder | None = Field(
        None, description="Instance pools by price-performance, where two or more types met the target."
    )


def _hourly_priced(*points: Point) -> bool:
    """Whether every point is on instances, priced by the hour (serverless is priced by use)."""
    return all(point.mode != "serverless" for point in points)


def _hourly(point: Point) -> float:
    """The instance's price per hour, back from cost per 1M and throughput."""
    return (point.cost_per_million or 0.0) * point.samples_per_s * 3600 / 1e6
