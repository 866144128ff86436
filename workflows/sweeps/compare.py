"""Judge a sweep's runs against the baseline sweep's, with the project's one comparison.

Runs are matched by key (what they measure). For each run that succeeded in both sweeps, the two
result.json documents are compared by ``workflows.reports.compare``: every shape and concurrency
measured in both gets a latency verdict (bootstrap interval of the median's change, against each
run's window-to-window noise) and a throughput verdict, or "no verdict" when samples or windows
are too few or a measurement was not stable. The sweep file's ``regression.min_change_pct`` is
the floor below which no change is called. A run that cannot be judged (its baseline result is
gone, the baseline run failed, no shape in common) is listed with the reason, never guessed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from workflows.benchmark.results import ShapeStats
from workflows.contracts import Contract
from workflows.reports.compare import REGRESSION, compare, key
from workflows.reports.tables import VERDICT_HEADER, table, verdict_cells

ShapeVerdictName = Literal["regression", "improvement", "within noise", "no verdict"]
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
    hosting: dict[str, Any] = Field(
        default_factory=dict,
        description="What the run deployed: mode, instance_type, instance_count (memory_size_mb for serverless).",
    )
    measured_on: dict[str, Any] | None = Field(
        None,
        description="The result's measured_on: where 'local' means this host's CPU, not the instance type.",
    )


class ShapeVerdict(Contract):
    """One shape at one concurrency of one run, judged against the same in the baseline run."""

    key: str
    run_id: str
    baseline_run_id: str
    batch_size: int
    sequence_length: int | str
    concurrency: int
    verdict: ShapeVerdictName
    latency: dict[str, Any] = Field(description="latency_verdict: median_change, diff_ms_ci95, noise.")
    throughput: dict[str, Any] = Field(description="throughput_verdict: mean_change, noise.")
    p50_ms: tuple[float | None, float | None] = Field(description="(baseline, now), for people.")


class UnjudgedRun(Contract):
    key: str
    run_id: str
    reason: str


class RunsComparison(Contract):
    verdict: SweepVerdict
    min_change_pct: float = 0.0
    shapes: list[ShapeVerdict] = Field(default_factory=list)
    unjudged: list[UnjudgedRun] = Field(default_factory=list, description="Runs in both, not comparable.")
    new_runs: list[str] = Field(default_factory=list, description="Keys absent from the baseline.")
    dropped_runs: list[str] = Field(default_factory=list, description="Baseline keys absent now.")

    @property
    def regressions(self) -> list[ShapeVerdict]:
        return [s for s in self.shapes if s.verdict == REGRESSION]


ResultLoader = Callable[[str], dict[str, Any] | None]


def _judge(
    run: RunSummary, before: RunSummary, load: ResultLoader, min_change_pct: float
) -> list[ShapeVerdict] | str:
    """The run's shapes judged against the baseline run's, or why they cannot be."""
    if before.status != "SUCCEEDED":
        return f"the baseline run {before.run_id} failed"
    if not before.result_uri:
        return f"the baseline run {before.run_id} kept no result.json"
    if not run.result_uri:
        return "this run kept no result.json"
    baseline, current = load(before.result_uri), load(run.result_uri)
    if baseline is None:
        return f"the baseline result {before.result_uri} is missing or unreadable"
    if current is None:
        return f"the result {run.result_uri} is missing or unreadable"
    rows = compare(baseline, current, min_change_pct=min_change_pct)
    if not rows:
        return "no shape measured in both runs (a result without measurements, or other shapes)"
    p50_before = {key(m): m.get("p50_ms") for m in baseline.get("measurements") or []}
    p50_now = {key(m): m.get("p50_ms") for m in current.get("measurements") or []}
    return [
        ShapeVerdict(
            key=run.key,
            run_id=run.run_id,
            baseline_run_id=before.run_id,
            p50_ms=(p50_before.get(key(row)), p50_now.get(key(row))),
            **row,
        )
        for row in rows
    ]


def compare_runs(
    current: list[RunSummary],
    baseline: list[RunSummary] | None,
    *,
    load: ResultLoader,
    min_change_pct: float,
) -> RunsComparison:
    """Every run that succeeded now and is in the baseline, judged shape by shape.

    Args:
        current: This sweep's runs (failed ones are reported by the sweep, not compared).
        baseline: The baseline sweep's runs, or None when there is no baseline yet.
        load: Reads a result.json by URI; None when it does not exist or cannot be read.
        min_change_pct: The practical-significance floor (``regression.min_change_pct``).

    Returns:
        "regression" when any shape regressed, else "no_regression" ("no_baseline" without one).
    """
    if baseline is None:
        return RunsComparison(verdict="no_baseline", min_change_pct=min_change_pct)
    before = {run.key: run for run in baseline}
    shapes: list[ShapeVerdict] = []
    unjudged: list[UnjudgedRun] = []
    for run in current:
        if run.status != "SUCCEEDED" or run.key not in before:
            continue
        judged = _judge(run, before[run.key], load, min_change_pct)
        if isinstance(judged, str):
            unjudged.append(UnjudgedRun(key=run.key, run_id=run.run_id, reason=judged))
        else:
            shapes += judged
    now = {run.key for run in current}
    return RunsComparison(
        verdict="regression" if any(s.verdict == REGRESSION for s in shapes) else "no_regression",
        min_change_pct=min_change_pct,
        shapes=shapes,
        unjudged=unjudged,
        new_runs=sorted(now - set(before)),
        dropped_runs=sorted(set(before) - now),
    )


def _p50(pair: tuple[float | None, float | None]) -> str:
    was, now = (f"{v:.2f}" if v is not None else "-" for v in pair)
    return f"{was} → {now}"


def comparison_table(comparison: RunsComparison) -> list[str]:
    """Markdown: one row per compared shape, with both verdicts, the interval and the noise."""
    if not comparison.shapes:
        return []
    return table(
        ["run", "batch", "seq", "conc", "p50 ms (was → now)", *VERDICT_HEADER],
        [
            [
                s.key,
                s.batch_size,
                s.sequence_length,
                s.concurrency,
                _p50(s.p50_ms),
                *verdict_cells(s.model_dump(mode="json")),
            ]
            for s in comparison.shapes
        ],
    )
