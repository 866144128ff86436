"""CompareWithBaseline: gather every run's result into one sweep summary, compare, and report.

Layout under the artifact bucket::

    sweeps/<name>/<sweep id>/summary.json   every run with its figures and result_uri, and the comparison
    sweeps/<name>/<sweep id>/report.md      the same, for people
    sweeps/<name>/baseline.json             the summary later sweeps are compared with

The comparison reads each run's result.json (``results/<run id>/``) and the baseline run's, whose
URI the baseline summary keeps: the verdicts need every latency sample and window, which the
summary does not hold.

The baseline moves only to a sweep with no regression and no failed run: a regression keeps
failing the following sweeps until it is fixed, or until someone accepts it by copying that
sweep's summary.json over baseline.json.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationError

from workflows import clock
from workflows.aws.clients import aws_errors, split_s3_uri
from workflows.aws.storage import get_text, put_text
from workflows.benchmark.results import BenchmarkResult
from workflows.contracts import Contract
from workflows.naming import SWEEPS_PREFIX, results_prefix
from workflows.reports import venue
from workflows.reports.compare import NO_VERDICT, REGRESSION
from workflows.settings import Settings
from workflows.sweeps.compare import (
    RunsComparison,
    RunSummary,
    ShapeVerdict,
    SweepVerdict,
    compare_runs,
    comparison_table,
)
from workflows.sweeps.partition_render import one_line as partitions_line
from workflows.sweeps.partition_render import render as render_partitions
from workflows.sweeps.partition_verdict import PartitionComparisonResult, compare_partitions
from workflows.sweeps.recommend import recommend
from workflows.sweeps.recommend_render import one_line as recommendation_line
from workflows.sweeps.recommend_render import render as render_recommendation
from workflows.sweeps.recommendation import Recommendation
from workflows.sweeps.spec import SweepSpec

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

# The hosting settings a recommendation names and prices a run by.
SUMMARY_HOSTING = (
    "mode",
    "instance_type",
    "instance_count",
    "memory_size_mb",
    "max_concurrency",
    "provisioned_concurrency",
    "served_instance_types",
    "mixed_fleet",
    "gpu_partition",
    "partitions_per_gpu",
)
# 2: the comparison holds noise-aware verdicts (workflows.reports.compare); 1 held fixed thresholds.
SUMMARY_SCHEMA_VERSION = 2


class RunOutcome(Contract):
    """What the sweep's Map records for one run."""

    index: int
    key: str
    run_id: str
    status: Literal["SUCCEEDED", "FAILED"]
    error: str | None = None


class CompareRequest(Contract):
    sweep: SweepSpec
    sweep_id: str
    runs: list[RunOutcome]


class SweepComparison(Contract):
    sweep_id: str
    verdict: SweepVerdict
    baseline_sweep_id: str | None
    failed_count: int
    failed_runs: list[str] = Field(default_factory=list)
    regressions: int
    recommended_run_id: str | None = Field(
        None, description="The run the recommendation picks (the sweep file's `recommend`), if any meets it."
    )
    summary_uri: str
    report_uri: str
    summary: str = Field(
        description="One paragraph: the verdict, what regressed, what failed, where the report is."
    )


def sweep_uri(bucket: str, name: str, suffix: str) -> str:
    return f"s3://{bucket}/{SWEEPS_PREFIX}{name}/{suffix}"


def read_json(s3: S3Client, uri: str) -> dict[str, Any] | None:
    """The object's JSON, or None when it does not exist.

    Existence is asked with a listing: S3 answers a GET of a missing key with 403, not 404, when
    the caller's ListBucket permission is limited to prefixes (as this project's roles are).
    """
    bucket, key = split_s3_uri(uri)
    with aws_errors(f"list {uri}"):
        found = s3.list_objects_v2(Bucket=bucket, Prefix=key, MaxKeys=1).get("Contents", [])
    if not found or found[0]["Key"] != key:
        return None
    data = json.loads(get_text(s3, uri))
    return data if isinstance(data, dict) else None


def read_result(s3: S3Client, uri: str) -> dict[str, Any] | None:
    """A run's result.json for the comparison; None when it is gone or is not a JSON document."""
    try:
        return read_json(s3, uri)
    except ValueError:
        return None


def gather_run(run: RunOutcome, *, s3: S3Client, bucket: str) -> RunSummary:
    """A run's figures from its result.json (written by the deploy pipeline, failed or not)."""
    uri = f"s3://{bucket}/{results_prefix(run.run_id)}result.json"
    result = read_json(s3, uri)
    error = run.error
    shapes = []
    if result is None:
        error = f"{error or 'no result'}: no result.json (the run ended before its report)"
        uri_or_none = None
    else:
        uri_or_none = uri
        if result.get("benchmark"):
            try:
                shapes = BenchmarkResult.model_validate(result["benchmark"]).shapes
            except ValidationError as invalid:
                error = f"result.json benchmark does not validate: {invalid.error_count()} errors"
        if run.status == "FAILED" and result.get("error"):
            failure = result["error"]
            diagnosis = (result.get("diagnosis") or {}).get("id")
            error = f"{failure.get('Error')}{f' ({diagnosis})' if diagnosis else ''}: {failure.get('Cause', '')[:300]}"
    return RunSummary(
        index=run.index,
        key=run.key,
        run_id=run.run_id,
        status=run.status,
        error=error,
        result_uri=uri_or_none,
        shapes=shapes if run.status == "SUCCEEDED" else [],
        hosting={k: v for k, v in (result or {}).get("hosting", {}).items() if k in SUMMARY_HOSTING},
        measured_on=venue.of_result(result) if result is not None else None,
    )


def _called(shape: ShapeVerdict) -> str:
    latency, throughput = shape.latency, shape.throughput
    parts = []
    if latency["verdict"] == REGRESSION:
        low, high = latency["diff_ms_ci95"]
        parts.append(f"p50 {latency['median_change'] * 100:+.1f}% (CI95 {low:+.2f}..{high:+.2f} ms)")
    if throughput["verdict"] == REGRESSION:
        parts.append(f"req/s {throughput['mean_change'] * 100:+.1f}%")
    return f"{shape.key} b{shape.batch_size}/{shape.sequence_length} c{shape.concurrency}: {', '.join(parts)}"


def one_line(
    sweep_id: str,
    comparison: RunsComparison,
    runs: list[RunSummary],
    report_uri: str,
    recommendation: Recommendation | None = None,
    partitions: PartitionComparisonResult | None = None,
) -> str:
    parts = [f"sweep {sweep_id}: {comparison.verdict.replace('_', ' ')}"]
    if recommendation is not None:
        parts.append(recommendation_line(recommendation))
    if partitions is not None:
        parts.append(partitions_line(partitions))
    regressions = comparison.regressions
    if regressions:
        worst = "; ".join(_called(s) for s in regressions[:3])
        parts.append(f"{len(regressions)} of {len(comparison.shapes)} shapes regressed ({worst})")
    undecided = sum(s.verdict == NO_VERDICT for s in comparison.shapes)
    if undecided:
        parts.append(f"no verdict on {undecided} of {len(comparison.shapes)} shapes")
    if comparison.unjudged:
        parts.append(
            f"{len(comparison.unjudged)} runs not judged ("
            + "; ".join(f"{u.run_id}: {u.reason}" for u in comparison.unjudged[:3])
            + ")"
        )
    failed = [r for r in runs if r.status == "FAILED"]
    if failed:
        parts.append(
            f"{len(failed)} of {len(runs)} runs failed ("
            + "; ".join(f"{r.run_id}: {(r.error or '')[:160]}" for r in failed[:3])
            + ")"
        )
    parts.append(f"report: {report_uri}")
    return ". ".join(parts)


def render_report(
    summary: dict[str, Any],
    comparison: RunsComparison,
    recommendation: Recommendation | None = None,
    partitions: PartitionComparisonResult | None = None,
) -> str:
    lines = [
        f"# deploybench sweep {summary['sweep_id']}",
        "",
        *([f"**Decision: {recommendation.decision}.**", ""] if recommendation is not None else []),
        f"- verdict: **{comparison.verdict}** (baseline: {summary['baseline_sweep_id'] or 'none'})",
        f"- runs: {len(summary['runs'])}, failed: {sum(r['status'] == 'FAILED' for r in summary['runs'])}",
        "- a change is called when it exceeds both runs' window-to-window noise and "
        f"{comparison.min_change_pct:g}% and is significant: latency, the 95% bootstrap interval of the "
        "median's change excludes zero; throughput, the 95% bootstrap interval of its change (each run's "
        "clients over its resampled mean latency) excludes zero",
        "",
        "## Runs",
        "",
        "| # | run | run id | status | shapes | error |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['index']} | {r['key']} | {r['run_id']} | {r['status']} | {len(r['shapes'])} | {(r['error'] or '-')[:200]} |"
        for r in summary["runs"]
    ]
    if recommendation is not None:
        lines += render_recommendation(
            recommendation, [RunSummary.model_validate(r) for r in summary["runs"]]
        )
    else:
        lines += [
            "",
            "No recommendation: add `recommend: {p99_ms: 100, batch_size: 8}` to the sweep file to rank the "
            "runs by cost per 1M inferences under a latency target.",
        ]
    if partitions is not None:
        lines += render_partitions(partitions)
    table = comparison_table(comparison)
    if table:
        lines += ["", "## Against the baseline", "", *table]
    if comparison.unjudged:
        lines += ["", "## Runs without a verdict", ""]
        lines += [f"- {u.key} ({u.run_id}): {u.reason}" for u in comparison.unjudged]
    if comparison.new_runs or comparison.dropped_runs:
        lines += ["", f"- new runs: {', '.join(comparison.new_runs) or '-'}"]
        lines += [f"- runs no longer in the sweep: {', '.join(comparison.dropped_runs) or '-'}"]
    return "\n".join(lines) + "\n"


def compare_sweep(request: CompareRequest, *, s3: S3Client, settings: Settings) -> SweepComparison:
    """Gather, compare with the baseline, write summary.json and report.md, move the baseline if clean."""
    sweep = request.sweep
    runs = [
        gather_run(run, s3=s3, bucket=settings.bucket) for run in sorted(request.runs, key=lambda r: r.index)
    ]
    baseline = read_json(s3, sweep_uri(settings.bucket, sweep.name, "baseline.json"))
    baseline_runs = [RunSummary.model_validate(r) for r in baseline["runs"]] if baseline else None
    # Results are read again run by run (not kept from gathering): a result holds every latency
    # sample, and only two at a time stay in memory.
    comparison = compare_runs(
        runs,
        baseline_runs,
        load=lambda uri: read_result(s3, uri),
        min_change_pct=sweep.regression.min_change_pct,
    )
    recommendation = recommend(runs, sweep.recommend) if sweep.recommend else None
    partitions = compare_partitions(sweep, runs)
    summary_uri = sweep_uri(settings.bucket, sweep.name, f"{request.sweep_id}/summary.json")
    report_uri = sweep_uri(settings.bucket, sweep.name, f"{request.sweep_id}/report.md")
    summary = {
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "sweep_id": request.sweep_id,
        "name": sweep.name,
        "finished_at": clock.now().isoformat(),
        "baseline_sweep_id": baseline["sweep_id"] if baseline else None,
        "regression": sweep.regression.model_dump(mode="json"),
        "runs": [r.model_dump(mode="json") for r in runs],
        "comparison": comparison.model_dump(mode="json"),
        "recommendation": recommendation.model_dump(mode="json") if recommendation else None,
        "decision": recommendation.decision if recommendation else None,
        "partitions": partitions.model_dump(mode="json") if partitions else None,
    }
    text = json.dumps(summary, indent=2)
    put_text(s3, summary_uri, text, "application/json")
    put_text(s3, report_uri, render_report(summary, comparison, recommendation, partitions), "text/markdown")
    failed = [r.run_id for r in runs if r.status == "FAILED"]
    if comparison.verdict != "regression" and not failed:
        put_text(s3, sweep_uri(settings.bucket, sweep.name, "baseline.json"), text, "application/json")
    return SweepComparison(
        sweep_id=request.sweep_id,
        verdict=comparison.verdict,
        baseline_sweep_id=summary["baseline_sweep_id"],
        failed_count=len(failed),
        failed_runs=failed,
        regressions=len(comparison.regressions),
        recommended_run_id=recommendation.recommended_run_id if recommendation else None,
        summary_uri=summary_uri,
        report_uri=report_uri,
        summary=one_line(request.sweep_id, comparison, runs, report_uri, recommendation, partitions),
    )
