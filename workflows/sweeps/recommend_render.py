"""A sweep's recommendation in words: the decision sentence and the Markdown section of the sweep report.

Writes what ``workflows.sweeps.recommend`` decided: the ranking with the recommended row marked, whether
the first two differ beyond their 95% intervals, the local-host caveat, and every run's figures side by
side; it decides nothing.
"""

from __future__ import annotations

from typing import Any

from workflows.benchmark.host import describe_cpu
from workflows.reports.tables import fmt, table
from workflows.reports.venue import LOCAL
from workflows.sweeps.compare import RunSummary
from workflows.sweeps.pool_order import hosting_block
from workflows.sweeps.recommendation import Point, Recommendation, _hourly, _hourly_priced
from workflows.sweeps.spec import RecommendPolicy


def _price_of(point: Point) -> str:
    """What the point costs, as its buyer reads it: an instance by the hour, serverless per 1M."""
    if point.mode == "serverless":
        return f"{point.cost_per_million or 0.0:.4g} USD per 1M inferences"
    return f"{_hourly(point):.4g} USD an hour"


def _target(policy: RecommendPolicy) -> str:
    sequence = (
        "every measured sequence length"
        if policy.sequence_length is None
        else f"sequence length {policy.sequence_length}"
    )
    return f"p99 ≤ {policy.p99_ms:g} ms at batch size {policy.batch_size}, {sequence}"


def interval_text(interval: list[float | None] | None) -> str:
    """``95% CI 80.1–97.3 ms``, ``95% CI ≥ 80.1 ms, unbounded above``, or ``no interval``."""
    if not interval:
        return "no interval"
    low, high = interval
    if low is None and high is None:
        return "unbounded"
    if high is None:
        return f"95% CI ≥ {fmt(low)} ms, unbounded above"
    if low is None:
        return f"95% CI ≤ {fmt(high)} ms"
    return f"95% CI {fmt(low)}–{fmt(high)} ms"


def decision(recommendation: Recommendation) -> str:
    """The sweep's decision in one sentence: the recommendation, that the first two cannot be told
    apart, or that none met the target and which came closest."""
    policy = recommendation.policy
    estimate = " (local estimate: the runs shared this host's CPUs)" if recommendation.local else ""
    top = next((r for r in recommendation.ranked if r.recommended), None)
    if top is None or top.point is None:
        measured = [p for p in recommendation.points if p.p99_ms is not None]
        if not measured:
            return f"none met {_target(policy)}; none measured batch size {policy.batch_size}{estimate}"
        closest = min(measured, key=lambda p: p.p99_ms or 0.0)
        return (
            f"none met p99 ≤ {policy.p99_ms:g} ms; the closest was {closest.instance_type} {closest.mode} at "
            f"{fmt(closest.p99_ms)} ms ({closest.concurrency} clients, {interval_text(closest.p99_ci_ms)}, "
            f"n={closest.n}){estimate}"
        )
    p = top.point
    apart = recommendation.separation
    if apart is not None and apart.distinguishable is False:
        other = next(r.point for r in recommendation.ranked if r.rank == 2 and r.point)
        more = (
            f"; about {apart.n_to_separate} samples each would separate them" if apart.n_to_separate else ""
        )
        return (
            f"{p.instance_type} and {other.instance_type} are indistinguishable at this n (n={apart.n}, "
            f"median intervals overlap{more}); pick the cheaper: {p.instance_type} {p.mode} at "
            f"{p.concurrency} clients, {_price_of(p)}, p99 {fmt(p.p99_ms)} ms "
            f"({interval_text(p.p99_ci_ms)}){estimate}"
        )
    return (
        f"recommended: {p.instance_type} {p.mode} at {p.concurrency} concurrent clients, "
        f"{p.cost_per_million:.4g} USD per 1M inferences{estimate}, p99 {fmt(p.p99_ms)} ms "
        f"({interval_text(p.p99_ci_ms)}, n={p.n}; {policy.p99_ms:g} ms target)"
        + ("" if p.stable else "; not stable: measure again before deciding")
    )


def one_line(recommendation: Recommendation) -> str:
    """The recommendation in a sentence (the sweep's summary line)."""
    return recommendation.decision or decision(recommendation)


def _cell(point: Point | None) -> str:
    if point is None:
        return "-"
    figures = f"{fmt(point.p50_ms)} / {fmt(point.p99_ms)}, {fmt(point.samples_per_s, 1)}, {fmt(point.cost_per_million, 4)}"
    return figures + (" ✓" if point.meets_target else "") + ("" if point.stable else " (not stable)")


def _top_two(recommendation: Recommendation) -> list[Point]:
    return [r.point for r in recommendation.ranked if r.rank in (1, 2) and r.point is not None]


def render(recommendation: Recommendation, runs: list[RunSummary]) -> list[str]:
    """Markdown: the ranking with the recommended row marked, then every run's figures side by side."""
    policy = recommendation.policy
    lines = ["", "## Recommendation", "", f"Target: {_target(policy)}. Ranked by USD per 1M inferences.", ""]
    apart = recommendation.separation
    if apart is not None:
        judged = {
            True: "their medians' 95% intervals do not overlap: the ranking rests on a measured difference",
            False: "their medians' 95% intervals overlap: indistinguishable at this n, so the cheaper "
            + ("by the hour" if _hourly_priced(*_top_two(recommendation)) else "per 1M inferences")
            + " ranks first"
            + (
                f" (about {apart.n_to_separate} samples each would separate them)"
                if apart.n_to_separate
                else ""
            ),
            None: "no intervals recorded: the difference is not tested",
        }[apart.distinguishable]
        lines += [f"First two ({apart.first_run_id}, {apart.second_run_id}, n={apart.n}): {judged}.", ""]
    if recommendation.local:
        cpus = sorted(
            {
                describe_cpu((r.measured_on or {}).get("cpu") or {})
                for r in runs
                if (r.measured_on or {}).get("where") == LOCAL
            }
        )
        lines += [
            f"**Local sweep** on this host ({'; '.join(cpus)}): the runs were measured on its CPU, not on the "
            "instance types they name, and their costs are estimates at those types' prices: the ranking "
            "shows what the price table makes of this CPU's figures, not a measurement of each type.",
            "",
        ]
    lines += table(
        [
            "rank",
            "",
            "instance type",
            "mode",
            "clients",
            "p50 ms",
            "p99 ms",
            "p99 95% CI",
            "n",
            "samples/s",
            "USD per 1M",
            "run",
            "note",
        ],
        [
            [
                r.rank if r.rank is not None else "-",
                "**recommended**" if r.recommended else "",
                r.point.instance_type if r.point else "-",
                r.point.mode if r.point else "-",
                r.point.concurrency if r.point else "-",
                r.point.p50_ms if r.point else None,
                r.point.p99_ms if r.point else None,
                interval_text(r.point.p99_ci_ms) if r.point else None,
                r.point.n if r.point else None,
                r.point.samples_per_s if r.point else None,
                r.point.cost_per_million if r.point else None,
                r.run_id,
                "; ".join(
                    part
                    for part in (r.reason, "shared host" if r.point and r.point.shared_host else "")
                    if part
                )
                or "-",
            ]
            for r in recommendation.ranked
        ],
    )
    lines += _pools(recommendation)
    concurrencies = sorted({p.concurrency for p in recommendation.points})
    if not concurrencies:
        return lines
    lines += [
        "",
        f"### Latency and throughput side by side (batch size {policy.batch_size})",
        "",
        "Each cell: p50 / p99 ms, samples/s, USD per 1M; ✓ meets the target.",
        "",
    ]
    by_run: dict[str, dict[int, Point]] = {}
    for p in recommendation.points:
        by_run.setdefault(p.run_id, {})[p.concurrency] = p
    rows = []
    for run in runs:
        cells = by_run.get(run.run_id)
        if not cells:
            continue
        first = next(iter(cells.values()))
        row: list[Any] = [first.instance_type, first.mode]
        row += [_cell(cells.get(c)) for c in concurrencies]
        rows.append(row)
    lines += table(["instance type", "mode", *(f"{c} clients" for c in concurrencies)], rows)
    return lines


def _pools(recommendation: Recommendation) -> list[str]:
    """The proposed InstancePools order: per type, its figures, then the ``hosting`` block to paste."""
    order = recommendation.pool_order
    if order is None:
        return []
    lines = [
        "",
        "### Instance pools",
        "",
        "The types that met the target, by price-performance (USD per 1M, lowest first): SageMaker tries "
        "priority 1 and falls back on the next when it has no capacity. Figures are each type's own.",
        "",
    ]
    lines += table(
        ["priority", "instance type", "device", "clients", "p99 ms", "samples/s", "USD per 1M", "run"],
        [
            [
                p.priority,
                p.instance_type,
                p.device,
                p.concurrency,
                p.p99_ms,
                p.samples_per_s,
                p.cost_per_million,
                p.run_id,
            ]
            for p in order.pools
        ],
    )
    lines += [f"- left out: {reason}" for reason in order.left_out]
    return [*lines, "", "```yaml", hosting_block(order), "```"]
