"""The sweep report's section on whole GPUs against partitions, and its part of the summary line."""

from __future__ import annotations

from workflows.sweeps.partition_verdict import ArmFigures, PartitionComparisonResult


def _interval(values: list[float | None] | None, digits: int = 1) -> str:
    if not values:
        return "-"
    return "[" + ", ".join("-" if v is None else f"{v:.{digits}f}" for v in values) + "]"


def _row(figures: ArmFigures, hourly: float | None) -> str:
    if figures.requests_per_s is None:
        return f"| {figures.arm} | {figures.layout} | - | - | - | - | - | {figures.reason} |"
    per_dollar = "-"
    if hourly and figures.per_dollar_hour is not None:
        low_high = [None if v is None else v / hourly for v in figures.requests_per_s_ci or []]
        per_dollar = f"{figures.per_dollar_hour:.3f} {_interval(low_high or None, 3)}"
    return (
        f"| {figures.arm} | {figures.layout} | {figures.concurrency} | {figures.requests_per_s:.1f} "
        f"{_interval(figures.requests_per_s_ci)} | {per_dollar} | {figures.p99_ms:.1f} {_interval(figures.p99_ci_ms)} "
        f"| {figures.n} | {'' if figures.stable else 'not stable'} |"
    )


def render(result: PartitionComparisonResult) -> list[str]:
    """Markdown lines: per model and shapes, both arms side by side and the decision."""
    comparison = result.comparison
    shape = f"batch {comparison.batch_size}" + (
        f", sequence length {comparison.sequence_length}" if comparison.sequence_length is not None else ""
    )
    lines = ["", "## Whole GPUs or partitions", ""]
    if result.stand_in:
        lines += [f"**{result.stand_in}.** These figures are this host's CPU, not any GPU's.", ""]
    lines += [
        "Each arm at its highest-throughput concurrency that is error-free"
        + (f" with p99 <= {comparison.p99_ms:g} ms" if comparison.p99_ms is not None else "")
        + f", at {shape} (the slowest sequence length counts). Intervals are 95%: req/s from the "
        "mean latency's interval (clients over mean latency), p99 distribution-free (a `-` bound: too few "
        "samples to give it). A difference is claimed only when the req/s intervals do not overlap; level "
        "arms are bought as whole GPUs, the simpler layout at the same price.",
    ]
    for verdict in result.verdicts:
        lines += [
            "",
            f"### {verdict.key}",
            "",
            f"**{verdict.decision}.**",
            "",
            f"Cost basis: {verdict.cost_basis}.",
            "",
            "| arm | layout | clients | req/s [95%] | req/s per $/h [95%] | p99 ms [95%] | n | note |",
            "|---|---|---|---|---|---|---|---|",
            _row(verdict.whole, verdict.hourly_usd),
            _row(verdict.partitions, verdict.hourly_usd),
        ]
    return lines


def one_line(result: PartitionComparisonResult) -> str:
    """The comparison's part of the sweep's summary line."""
    return "; ".join(verdict.decision for verdict in result.verdicts)
