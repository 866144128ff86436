"""Compare a sweep's runs with its baseline sweep, shape by shape.

A shape regresses when its p50 or p99 latency grew, or its samples/s fell, by more than the
sweep's thresholds; shapes that were not stable, or measured on too few requests, in either
sweep get no verdict rather than a guess. This is the sweep's own comparison over the result
JSON's figures; a noise-aware comparison (repeat windows, bootstrap) plugs in by replacing
``compare_runs`` with the same signature.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from workflows.contracts import Contract, ShapeStats
from workflows.sweeps.spec import RegressionThresholds

ShapeVerdictName = Literal["regression", "improvement", "same", "no_verdict"]
SweepVerdict = Literal["regression", "no_regression", "no_baseline"]


class RunSummary(Contract):
    """One run of a sweep, as kept in the sweep's summary (and in the baseline)."""

    index: int
    key: str
    run_id: str
    status: Literal["SUCCEEDED", "FAILED"]
    error: str | None = None
    result_uri: str | None = None
    shapes: list[ShapeStats] = Field(default_factory=list)


class ShapeComparison(Contract):
    key: str
    batch_size: int
    sequence_length: int | str
    concurrency: int
    baseline: dict[str, float]
    current: dict[str, float]
    change_pct: dict[str, float]
    verdict: ShapeVerdictName
    reasons: list[str] = Field(default_factory=list)


class RunsComparison(Contract):
    verdict: SweepVerdict
    shapes: list[ShapeComparison] = Field(default_factory=list)
    new_runs: list[str] = Field(default_factory=list, description="Keys absent from the baseline.")
    dropped_runs: list[str] = Field(default_factory=list, description="Baseline keys absent now.")

    @property
    def regressions(self) -> list[ShapeComparison]:
        return [s for s in self.shapes if s.verdict == "regression"]


def _shape_id(shape: ShapeStats) -> tuple[int, str, int]:
    return shape.batch_size, str(shape.sequence_length), shape.concurrency


def _change_pct(current: float, baseline: float) -> float:
    return round((current / baseline - 1.0) * 100.0, 2) if baseline > 0 else 0.0


def compare_shape(
    key: str, current: ShapeStats, baseline: ShapeStats, thresholds: RegressionThresholds
) -> ShapeComparison:
    """The verdict for one shape measured in both sweeps."""
    figures = ("p50_ms", "p99_ms", "samples_per_s")
    now = {f: float(getattr(current, f)) for f in figures}
    before = {f: float(getattr(baseline, f)) for f in figures}
    change = {f: _change_pct(now[f], before[f]) for f in figures}
    reasons: list[str] = []
    verdict: ShapeVerdictName
    if not (current.stable and baseline.stable):
        verdict, reasons = "no_verdict", ["not stable in both sweeps"]
    elif min(current.requests, baseline.requests) < thresholds.min_requests:
        verdict, reasons = "no_verdict", [f"fewer than {thresholds.min_requests} requests"]
    else:
        if change["p50_ms"] > thresholds.p50_pct:
            reasons.append(f"p50 +{change['p50_ms']}% (> {thresholds.p50_pct}%)")
        if change["p99_ms"] > thresholds.p99_pct:
            reasons.append(f"p99 +{change['p99_ms']}% (> {thresholds.p99_pct}%)")
        if change["samples_per_s"] < -thresholds.throughput_pct:
            reasons.append(f"samples/s {change['samples_per_s']}% (< -{thresholds.throughput_pct}%)")
        better = change["p50_ms"] < -thresholds.p50_pct or change["samples_per_s"] > thresholds.throughput_pct
        verdict = "regression" if reasons else "improvement" if better else "same"
    batch, sequence, concurrency = _shape_id(current)
    return ShapeComparison(
        key=key,
        batch_size=batch,
        sequence_length=current.sequence_length,
        concurrency=concurrency,
        baseline=before,
        current=now,
        change_pct=change,
        verdict=verdict,
        reasons=reasons,
    )


def compare_runs(
    current: list[RunSummary], baseline: list[RunSummary] | None, thresholds: RegressionThresholds
) -> RunsComparison:
    """Every shape of every successful run that the baseline measured too."""
    if baseline is None:
        return RunsComparison(verdict="no_baseline")
    before = {run.key: run for run in baseline if run.status == "SUCCEEDED"}
    now = {run.key: run for run in current if run.status == "SUCCEEDED"}
    shapes: list[ShapeComparison] = []
    for key, run in now.items():
        if key not in before:
            continue
        previous = {_shape_id(s): s for s in before[key].shapes}
        for shape in run.shapes:
            if _shape_id(shape) in previous:
                shapes.append(compare_shape(key, shape, previous[_shape_id(shape)], thresholds))
    regression = any(s.verdict == "regression" for s in shapes)
    return RunsComparison(
        verdict="regression" if regression else "no_regression",
        shapes=shapes,
        new_runs=sorted(set(now) - set(before)),
        dropped_runs=sorted(set(before) - set(now)),
    )


def comparison_table(comparison: RunsComparison) -> list[str]:
    """Markdown rows: one per compared shape."""
    if not comparison.shapes:
        return []
    lines = [
        "| run | batch | seq | conc | p50 ms (was) | p99 ms (was) | samples/s (was) | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in comparison.shapes:

        def cell(figure: str, shape: ShapeComparison = s) -> str:
            return (
                f"{shape.current[figure]:.2f} ({shape.baseline[figure]:.2f}, "
                f"{shape.change_pct[figure]:+.1f}%)"
            )

        verdict: Any = s.verdict if not s.reasons else f"{s.verdict}: {'; '.join(s.reasons)}"
        lines.append(
            f"| {s.key} | {s.batch_size} | {s.sequence_length} | {s.concurrency} | {cell('p50_ms')} | "
            f"{cell('p99_ms')} | {cell('samples_per_s')} | {verdict} |"
        )
    return lines
