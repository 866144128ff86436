"""Which instance type and mode to use: the sweep's runs ranked by cost per 1M inferences under a
latency target (the sweep file's ``recommend: {p99_ms: 100, batch_size: 8}``).

Everything comes from the figures the sweep summary already holds (each run's shapes and what it
deployed), priced with the same table and formula as a run's own cost section
(``workflows.reports.cost.per_million``). A point is one run at one concurrency: it meets the
target when every shape judged (the batch size served, at the chosen or at every sequence length)
is error-free and has a p99 at or under the target; its cost is the costliest of those shapes. A
run's best point is its cheapest that meets the target; the runs are ranked by it, stable points
before unstable ones (whose stopping rule did not hold: flagged, to be measured again), and
the first is recommended. A run that never meets the target is listed after, with the reason.

A ranking states a difference only when the data supports it: the first two runs are compared on
their slowest judged shape's median, with each median's distribution-free 95% interval; when the
intervals overlap, the two are indistinguishable at this n, the cheaper by the hour is
recommended (per 1M inferences where either is serverless, which has no hourly price), and the n that would separate them is named (intervals narrow as 1/√n). Runs
measured on one local host shared its CPUs with each other and with their load generators, and
are marked so.
"""

from __future__ import annotations

import math
from typing import Any

from workflows.benchmark.results import ShapeStats
from workflows.reports.cost import per_million, price_table
from workflows.reports.venue import LOCAL
from workflows.sweeps.compare import RunSummary
from workflows.sweeps.pool_order import pool_order
from workflows.sweeps.recommend_render import decision
from workflows.sweeps.recommendation import Point, Ranked, Recommendation, Separation, _hourly, _hourly_priced
from workflows.sweeps.spec import RecommendPolicy

UNSTABLE = "meets the target but was not stable (its stopping rule did not hold): measure again"


def _where(run: RunSummary) -> str:
    hosting = run.hosting
    if hosting.get("mode") == "serverless" or (
        hosting.get("memory_size_mb") and not hosting.get("instance_type")
    ):
        # No instance type: the memory, and whether requests meet a provisioned (warm) container.
        provisioned = hosting.get("provisioned_concurrency")
        kept = f", {provisioned} provisioned" if provisioned else ", on demand"
        return f"{hosting.get('memory_size_mb') or '?'} MB serverless{kept}"
    if hosting.get("instance_type"):
        count = int(hosting.get("instance_count") or 1)
        return str(hosting["instance_type"]) + (f" × {count}" if count > 1 else "")
    if hosting.get("memory_size_mb"):
        return f"{hosting['memory_size_mb']} MB serverless"
    return "?"


def _miss(shapes: list[ShapeStats], target: float) -> str:
    """Why these shapes miss the target: errors first, else the slowest p99 over it."""
    for s in shapes:
        if s.errors:
            return f"b{s.batch_size}/{s.sequence_length}: {s.errors} errors"
        if s.p99_ms is None:
            return f"b{s.batch_size}/{s.sequence_length}: no successful request"
    worst = max(shapes, key=lambda s: s.p99_ms or 0.0)
    if (worst.p99_ms or 0.0) > target:
        return f"b{worst.batch_size}/{worst.sequence_length}: p99 {worst.p99_ms:.1f} ms > {target:g} ms"
    return ""


def _slowest(shapes: list[ShapeStats], figure: str) -> ShapeStats | None:
    known = [s for s in shapes if getattr(s, figure) is not None]
    return max(known, key=lambda s: getattr(s, figure)) if known else None


def run_points(run: RunSummary, policy: RecommendPolicy, prices: dict[str, Any]) -> list[Point]:
    """The run at each concurrency it measured, judged at the policy's batch (and sequence) size."""
    chosen = [
        s
        for s in run.shapes
        if s.batch_size == policy.batch_size
        and (policy.sequence_length is None or str(s.sequence_length) == str(policy.sequence_length))
    ]
    costs = {
        (r["sequence_length"], r["concurrency"]): r["cost_per_million"]
        for r in per_million(
            {"hosting": run.hosting, "measurements": [s.model_dump(mode="json") for s in chosen]}, prices
        )
    }
    points = []
    for concurrency in sorted({s.concurrency for s in chosen}):
        shapes = [s for s in chosen if s.concurrency == concurrency]
        shape_costs = [costs.get((s.sequence_length, concurrency)) for s in shapes]
        p50s = [s.p50_ms for s in shapes if s.p50_ms is not None]
        p99s = [s.p99_ms for s in shapes if s.p99_ms is not None]
        reason = _miss(shapes, policy.p99_ms)
        priced = None if any(c is None for c in shape_costs) else max(c for c in shape_costs if c is not None)
        if not reason and priced is None:
            reason = f"no price for {_where(run)} in the price table"
        slow50, slow99 = _slowest(shapes, "p50_ms"), _slowest(shapes, "p99_ms")
        points.append(
            Point(
                run_id=run.run_id,
                key=run.key,
                mode=str(run.hosting.get("mode", "?")),
                instance_type=_where(run),
                concurrency=concurrency,
                sequence_lengths=[s.sequence_length for s in shapes],
                p50_ms=max(p50s) if p50s else None,
                p99_ms=max(p99s) if len(p99s) == len(shapes) else None,
                samples_per_s=min(s.samples_per_s for s in shapes),
                cost_per_million=priced,
                meets_target=not reason,
                stable=all(s.stable for s in shapes),
                reason=reason,
                n=min(s.requests - s.errors for s in shapes),
                p50_ci_ms=slow50.p50_ci_ms if slow50 else None,
                p99_ci_ms=slow99.p99_ci_ms if slow99 else None,
                shared_host=(run.measured_on or {}).get("where") == LOCAL,
            )
        )
    return points


def separation(first: Point, second: Point) -> Separation:
    """Do the two points' medians differ beyond their 95% intervals? With the n that would tell.

    Non-overlapping 95% intervals are a conservative test of a difference. When they overlap, the
    sum of their half-widths must shrink below the difference of the medians: widths go as
    1/√n, so about ``n * ((w1 + w2) / |m1 - m2|) ** 2`` samples each would separate them.
    """
    ids = {"first_run_id": first.run_id, "second_run_id": second.run_id}
    n = min(first.n or 0, second.n or 0)
    a, b = first.p50_ci_ms, second.p50_ci_ms
    if not a or not b or None in (*a, *b) or first.p50_ms is None or second.p50_ms is None:
        return Separation(**ids, distinguishable=None, n=n)
    low_a, high_a, low_b, high_b = (float(v) for v in (*a, *b))  # type: ignore[arg-type]
    if high_a < low_b or high_b < low_a:
        return Separation(**ids, distinguishable=True, n=n)
    difference = abs(first.p50_ms - second.p50_ms)
    widths = (high_a - low_a + high_b - low_b) / 2
    needed = math.ceil(max(first.n or 1, second.n or 1) * (widths / difference) ** 2) if difference else None
    return Separation(**ids, distinguishable=False, n=n, n_to_separate=needed)


def recommend(
    runs: list[RunSummary], policy: RecommendPolicy, prices: dict[str, Any] | None = None
) -> Recommendation:
    """Rank the runs by the cost per 1M inferences of their cheapest point that meets the target."""
    prices = prices or price_table()
    points: list[Point] = []
    best: list[tuple[RunSummary, Point]] = []
    missed: list[Ranked] = []
    for run in runs:
        if run.status != "SUCCEEDED":
            missed.append(
                Ranked(
                    rank=None,
                    recommended=False,
                    point=None,
                    run_id=run.run_id,
                    key=run.key,
                    reason="run failed",
                )
            )
            continue
        if run.hosting.get("mixed_fleet"):
            # Instances of several pooled types served it: a mixture, no one type's figures.
            served = ", ".join(run.hosting.get("served_instance_types") or {})
            missed.append(
                Ranked(rank=None, recommended=False, point=None, run_id=run.run_id, key=run.key,
                       reason=f"mixed fleet ({served}): not one type's figures")
            )  # fmt: skip
            continue
        mine = run_points(run, policy, prices)
        points += mine
        meeting = [p for p in mine if p.meets_target]
        if meeting:
            best.append(
                (run, min(meeting, key=lambda p: (not p.stable, p.cost_per_million, p.p99_ms or 0.0)))
            )
            continue
        closest = min(mine, key=lambda p: p.p99_ms if p.p99_ms is not None else float("inf"), default=None)
        reason = (
            closest.reason
            if closest
            else f"batch size {policy.batch_size} not measured"
            + (f" at sequence length {policy.sequence_length}" if policy.sequence_length is not None else "")
        )
        missed.append(
            Ranked(rank=None, recommended=False, point=closest, run_id=run.run_id, key=run.key, reason=reason)
        )
    best.sort(key=lambda pair: (not pair[1].stable, pair[1].cost_per_million or 0.0, pair[1].p99_ms or 0.0))
    apart = None
    if len(best) > 1 and best[0][1].stable and best[1][1].stable:
        apart = separation(best[0][1], best[1][1])
        hourly = _hourly_priced(best[0][1], best[1][1])
        if apart.distinguishable is False and hourly and _hourly(best[1][1]) < _hourly(best[0][1]):
            # The measurements cannot tell them apart: the cost per 1M difference is noise, the
            # price per hour is not (serverless has none: there the cost per 1M order stands).
            best[0], best[1] = best[1], best[0]
    ranked = [
        Ranked(
            rank=rank,
            recommended=rank == 1,
            point=point,
            run_id=run.run_id,
            key=run.key,
            reason="" if point.stable else UNSTABLE,
        )
        for rank, (run, point) in enumerate(best, start=1)
    ]
    recommendation = Recommendation(
        policy=policy,
        recommended_run_id=ranked[0].run_id if ranked else None,
        ranked=ranked + missed,
        points=points,
        local=any((r.measured_on or {}).get("where") == LOCAL for r in runs),
        separation=apart,
    )
    recommendation.decision = decision(recommendation)
    recommendation.pool_order = pool_order(best)
    return recommendation
