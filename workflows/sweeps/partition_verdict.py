"""Whole GPUs or their partitions: which to buy, from the two arms' figures (``partition_arms``).

Both arms run on the same instances, so they cost the same per hour (the price table's
``inference_instance_hour``, ``workflows/data/prices.yaml``); requests per second per dollar an hour
orders them as throughput does. Each arm's point is its highest-throughput concurrency among those
that are error-free (and under the comparison's ``p99_ms`` when set), at the judged batch size; with
several sequence lengths, the slowest counts. Throughput's 95% interval is the clients over the
interval of the mean latency (mean ± 1.96·std/√n, as ``workflows.reports.compare`` treats throughput:
clients over mean latency); a difference is claimed only when the two intervals do not overlap.
Otherwise the arms are level and whole GPUs are preferred: the simpler layout at the same price.

Runs on the local SageMaker stand in: a partition there is one more copy on this host's CPU, not a
MIG slice, and every figure and decision says so.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import Field

from workflows.benchmark.results import ShapeStats
from workflows.contracts import Contract
from workflows.reports.cost import price_table
from workflows.reports.venue import LOCAL, LOCAL_PARTITIONS
from workflows.sweeps.compare import RunSummary
from workflows.sweeps.partition_arms import (
    PARTITIONED,
    WHOLE,
    Arm,
    PartitionComparison,
    arm_of,
    gpus,
    key_suffix,
)
from workflows.sweeps.spec import SweepSpec, expand

Z95 = 1.96


class ArmFigures(Contract):
    """One arm's best point: the concurrency with the most requests per second that counts."""

    arm: Arm
    run_id: str | None
    layout: str = Field(description="The copies and what each one holds.")
    concurrency: int | None = None
    requests_per_s: float | None = None
    requests_per_s_ci: list[float | None] | None = Field(
        None, description="95% interval [low, high]; a null high where the mean's interval reaches zero."
    )
    per_dollar_hour: float | None = Field(None, description="Requests per second per $ of the hourly price.")
    p99_ms: float | None = None
    p99_ci_ms: list[float | None] | None = None
    n: int | None = Field(None, description="Fewest successful requests among the point's shapes.")
    stable: bool = True
    reason: str = Field("", description="Why the arm has no point (empty when it has one).")


class PartitionVerdict(Contract):
    """Whole GPUs against partitions for one model and group of shapes."""

    key: str = Field(description="The whole-GPU run's key: what both arms measure.")
    instance_type: str
    hourly_usd: float | None = Field(description="The price per hour both arms pay; None: not in the table.")
    cost_basis: str
    whole: ArmFigures
    partitions: ArmFigures
    separated: bool | None = Field(
        description="The throughput intervals do not overlap; None: an arm has no point."
    )
    buy: Arm | None
    decision: str
    stand_in: str | None = Field(
        None, description="Set where a run was local: the figures are of the stand-in."
    )


class PartitionComparisonResult(Contract):
    comparison: PartitionComparison
    verdicts: list[PartitionVerdict]
    stand_in: str | None = None


def throughput_interval(shape: ShapeStats) -> list[float | None] | None:
    """Requests per second's 95% interval: the clients over the mean latency's interval."""
    n = shape.requests - shape.errors
    if shape.mean_ms is None or shape.std_ms is None or n < 2 or not shape.mean_ms:
        return None
    half = Z95 * shape.std_ms / math.sqrt(n)
    low = shape.requests_per_s * shape.mean_ms / (shape.mean_ms + half)
    high = shape.requests_per_s * shape.mean_ms / (shape.mean_ms - half) if half < shape.mean_ms else None
    return [low, high]


def _point(shapes: list[ShapeStats], comparison: PartitionComparison) -> tuple[ShapeStats | None, str]:
    """The slowest shape of one concurrency, or why it does not count."""
    for shape in shapes:
        if shape.errors or shape.p99_ms is None:
            return (
                None,
                f"c{shape.concurrency} b{shape.batch_size}/{shape.sequence_length}: {shape.errors} errors",
            )
    worst = max(shapes, key=lambda s: s.p99_ms or 0.0)
    if comparison.p99_ms is not None and (worst.p99_ms or 0.0) > comparison.p99_ms:
        return None, f"c{worst.concurrency}: p99 {worst.p99_ms:.1f} ms > {comparison.p99_ms:g} ms"
    return min(shapes, key=lambda s: s.requests_per_s), ""


def arm_figures(
    arm: Arm, run: RunSummary | None, comparison: PartitionComparison, layout: str, hourly: float | None
) -> ArmFigures:
    """The arm's highest-throughput point that counts, or why there is none."""
    empty = {"arm": arm, "run_id": run.run_id if run else None, "layout": layout}
    if run is None or run.status != "SUCCEEDED":
        return ArmFigures(
            **empty, reason=f"run failed: {(run.error or '')[:200]}" if run else "run not found"
        )
    judged = [
        s
        for s in run.shapes
        if s.batch_size == comparison.batch_size
        and (comparison.sequence_length is None or str(s.sequence_length) == str(comparison.sequence_length))
    ]
    best: ShapeStats | None = None
    reasons = []
    for concurrency in sorted({s.concurrency for s in judged}):
        point, reason = _point([s for s in judged if s.concurrency == concurrency], comparison)
        reasons += [reason] if reason else []
        if point is not None and (best is None or point.requests_per_s > best.requests_per_s):
            best = point
    if best is None:
        return ArmFigures(
            **empty, reason="; ".join(reasons) or f"batch size {comparison.batch_size} not measured"
        )
    chosen = [s for s in judged if s.concurrency == best.concurrency]
    return ArmFigures(
        **empty,
        concurrency=best.concurrency,
        requests_per_s=best.requests_per_s,
        requests_per_s_ci=throughput_interval(best),
        per_dollar_hour=best.requests_per_s / hourly if hourly else None,
        p99_ms=max(s.p99_ms or 0.0 for s in chosen),
        p99_ci_ms=max(chosen, key=lambda s: s.p99_ms or 0.0).p99_ci_ms,
        n=min(s.requests - s.errors for s in chosen),
        stable=all(s.stable for s in chosen),
    )


def apart(a: list[float | None] | None, b: list[float | None] | None) -> bool:
    """Whether two 95% intervals do not overlap (a missing bound can never separate)."""
    if not a or not b or None in (*a, *b):
        return False
    low_a, high_a, low_b, high_b = (float(v) for v in (*a, *b))  # type: ignore[arg-type]
    return high_a < low_b or high_b < low_a


def _ms(figures: ArmFigures) -> str:
    if not figures.p99_ci_ms:
        return f"p99 {figures.p99_ms:.1f} ms (no interval recorded) at n={figures.n}"
    shown = ", ".join("-" if v is None else f"{v:.1f}" for v in figures.p99_ci_ms)
    return f"p99 {figures.p99_ms:.1f} ms [{shown}] at n={figures.n}"


def _tail(first: ArmFigures, second: ArmFigures) -> str:
    """Which arm's tail is shorter, where the p99 intervals separate it ('' otherwise)."""
    if not apart(first.p99_ci_ms, second.p99_ci_ms):
        return ""
    shorter = first if (first.p99_ms or 0.0) < (second.p99_ms or 0.0) else second
    return f"; {shorter.arm} have the shorter tail (p99 intervals separate)"


def decide(
    whole: ArmFigures, partitions: ArmFigures, *, instance_type: str
) -> tuple[bool | None, Arm | None, str]:
    """(separated, which to buy, the sentence) for the two arms' points."""
    on = f"on {instance_type}"
    for figures in (whole, partitions):
        if figures.requests_per_s is None:
            return None, None, f"no decision {on}: {figures.arm} has no point ({figures.reason})"
    for figures in (whole, partitions):
        if not figures.stable:
            unstable = f"no decision {on}: {figures.arm} was not stable (its stopping rule did not hold)"
            return False, None, unstable + ": measure again"
    rps_whole, rps_parts = whole.requests_per_s or 0.0, partitions.requests_per_s or 0.0
    p99s = f"whole GPUs {_ms(whole)}, partitions {_ms(partitions)}"
    if not apart(whole.requests_per_s_ci, partitions.requests_per_s_ci):
        n = min(whole.n or 0, partitions.n or 0)
        return False, WHOLE, (
            f"whole GPUs and partitions are level {on} ({rps_whole:.1f} and {rps_parts:.1f} req/s, 95% "
            f"intervals overlap at n={n}): buy whole GPUs, the simpler layout at the same price; "
            f"{p99s}{_tail(whole, partitions)}"
        )  # fmt: skip
    winner, loser = (partitions, whole) if rps_parts > rps_whole else (whole, partitions)
    high, low = max(rps_parts, rps_whole), min(rps_parts, rps_whole)
    return True, winner.arm, (
        f"buy {instance_type} as {winner.layout}: {high:.1f} req/s against {low:.1f} on {loser.arm} at "
        f"the same price, {high / low:.2f}x per dollar (95% intervals separate); {p99s}{_tail(winner, loser)}"
    )  # fmt: skip


def _copies(count: int) -> str:
    return f"{count} {'copy' if count == 1 else 'copies'}"


def _cost_basis(instance_type: str, count: int, prices: dict[str, Any]) -> tuple[float | None, str]:
    price = prices["sagemaker"]["inference_instance_hour"].get(instance_type)
    if price is None:
        return None, (
            f"no price for {instance_type} in workflows/data/prices.yaml: per-dollar figures left out; both arms "
            "run on the same instances, so throughput alone orders them"
        )
    hourly = float(price) * count
    return hourly, (
        f"{count} x {instance_type} at ${float(price):g}/h = ${hourly:g}/h for both arms (on-demand, "
        f"{prices.get('region', '?')}, workflows/data/prices.yaml taken {prices.get('taken', '?')})"
    )


def compare_partitions(
    sweep: SweepSpec, runs: list[RunSummary], prices: dict[str, Any] | None = None
) -> PartitionComparisonResult | None:
    """Each model and group of shapes: whole GPUs against partitions (None: the sweep asks no comparison)."""
    comparison = sweep.partitions
    if comparison is None:
        return None
    prices = prices or price_table()
    by_index = {run.index: run for run in runs}
    pairs: dict[str, dict[Arm, tuple[Any, RunSummary | None]]] = {}
    for item in expand(sweep):
        suffix = key_suffix(item.spec.hosting)
        pair = item.key.replace(suffix, "") if suffix else item.key
        pairs.setdefault(pair, {})[arm_of(item.spec.hosting)] = (item.spec.hosting, by_index.get(item.index))
    hourly, basis = _cost_basis(comparison.instance_type, comparison.instance_count, prices)
    per_instance = gpus(comparison)
    local = any((run.measured_on or {}).get("where") == LOCAL for run in runs)
    stand_in = LOCAL_PARTITIONS if local else None
    verdicts = []
    for key, arms in pairs.items():
        whole_hosting, whole_run = arms[WHOLE]
        part_hosting, part_run = arms[PARTITIONED]
        layouts = {
            WHOLE: f"{_copies(whole_hosting.copies)}, one per whole GPU ({per_instance} per instance)",
            PARTITIONED: (
                f"{_copies(part_hosting.copies)}, one per {part_hosting.gpu_partition} partition "
                f"({part_hosting.partitions_per_gpu} on each of {per_instance} GPUs per instance)"
            ),
        }
        whole = arm_figures(WHOLE, whole_run, comparison, layouts[WHOLE], hourly)
        partitions = arm_figures(PARTITIONED, part_run, comparison, layouts[PARTITIONED], hourly)
        separated, buy, sentence = decide(whole, partitions, instance_type=comparison.instance_type)
        verdicts.append(
            PartitionVerdict(
                key=key,
                instance_type=comparison.instance_type,
                hourly_usd=hourly,
                cost_basis=basis,
                whole=whole,
                partitions=partitions,
                separated=separated,
                buy=buy,
                decision=f"{stand_in}: {sentence}" if stand_in else sentence,
                stand_in=stand_in,
            )
        )
    return PartitionComparisonResult(comparison=comparison, verdicts=verdicts, stand_in=stand_in)
