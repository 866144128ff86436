"""Whole GPUs or partitions: the sweep's verdict from recorded figures (a difference only where the
throughput intervals separate it), and the summary and report a sweep writes, labelled where local."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from tests.support.aws import Aws
from tests.support.result_docs import measurement, result
from workflows.benchmark.results import ShapeStats
from workflows.benchmark.stats import percentile_intervals
from workflows.reports.cost import price_table
from workflows.reports.venue import LOCAL_PARTITIONS
from workflows.settings import Settings
from workflows.sweeps.compare import RunSummary
from workflows.sweeps.partition_arms import PARTITIONED, WHOLE
from workflows.sweeps.partition_verdict import compare_partitions, throughput_interval
from workflows.sweeps.report import CompareRequest, RunOutcome, compare_sweep
from workflows.sweeps.spec import expand, parse_sweep

SETTINGS = Settings(bucket="sweep-bucket", sagemaker_role_arn="arn:aws:iam::123456789012:role/sm")
P4D = "ml.p4d.24xlarge"
SWEEP: dict[str, Any] = {
    "name": "mig",
    "base": {"model": {"task": "embedding"}, "benchmark": {"batch_sizes": [8], "concurrency": [8, 56]}},
    "partitions": {"instance_type": P4D, "gpu_partition": "mig-1g.5gb", "batch_size": 8},
}
LOCAL_HOST = {"where": "local", "instance_type": P4D, "cpu": {"model": "test CPU", "logical_cpus": 2}}


def shapes(p50_by_concurrency: dict[int, float], **draw: Any) -> list[dict[str, Any]]:
    """Batch 8 at each concurrency, drawn around the given median."""
    return [measurement(p50, batch=8, concurrency=c, seed=c, **draw) for c, p50 in p50_by_concurrency.items()]


def run(index: int, p50_by_concurrency: dict[int, float], **draw: Any) -> RunSummary:
    """A run's figures as the summary holds them, with the percentiles' intervals of its samples."""
    return RunSummary(
        index=index,
        key=f"k{index}",
        run_id=f"run-{index}",
        status="SUCCEEDED",
        shapes=[
            ShapeStats.model_validate(
                {k: v for k, v in m.items() if k in ShapeStats.model_fields}
                | percentile_intervals(np.array(m["latencies_ms"]))
            )
            for m in shapes(p50_by_concurrency, **draw)
        ],
    )


def test_separated_throughput_says_which_to_buy_per_dollar_at_the_same_price() -> None:
    # Given whole GPUs at 400 req/s (8 clients, 20 ms) and partitions at 1400 req/s (56 clients, 40 ms)
    sweep = parse_sweep(SWEEP)
    result_ = compare_partitions(sweep, [run(0, {8: 20.0, 56: 140.0}), run(1, {8: 30.0, 56: 40.0})])
    assert result_ is not None
    (verdict,) = result_.verdicts
    # Then each arm's point is its highest-throughput concurrency, priced at the same hourly rate
    hourly = price_table()["sagemaker"]["inference_instance_hour"][P4D]
    assert verdict.hourly_usd == pytest.approx(hourly)
    assert (verdict.whole.concurrency, verdict.partitions.concurrency) == (8, 56)
    assert verdict.partitions.per_dollar_hour == pytest.approx(1400 / hourly)
    assert verdict.whole.per_dollar_hour == pytest.approx(400 / hourly)
    assert f"1 x {P4D} at ${hourly:g}/h" in verdict.cost_basis and "prices.yaml" in verdict.cost_basis
    # And the intervals separate, so the partitions are bought, with the ratio and both p99s stated
    assert (verdict.separated, verdict.buy, verdict.stand_in) == (True, PARTITIONED, None)
    assert verdict.decision.startswith(f"buy {P4D} as 56 copies, one per mig-1g.5gb partition")
    assert "3.50x per dollar (95% intervals separate)" in verdict.decision
    assert "whole GPUs p99 20." in verdict.decision and "] at n=600" in verdict.decision
    # And the partitions' longer tail is said, since the p99 intervals separate too
    assert verdict.decision.endswith("; whole GPUs have the shorter tail (p99 intervals separate)")


def test_overlapping_intervals_are_level_and_whole_gpus_are_preferred() -> None:
    # Given both arms near 400 req/s with wide latency spread and few samples
    sweep = parse_sweep(SWEEP)
    whole, parts = run(0, {8: 20.0}, spread=0.3, samples=100), run(1, {56: 139.0}, spread=0.3, samples=100)
    result_ = compare_partitions(sweep, [whole, parts])
    assert result_ is not None
    (verdict,) = result_.verdicts
    # Then no difference is claimed: the simpler layout is bought at the same price
    assert verdict.partitions.requests_per_s and verdict.whole.requests_per_s
    assert verdict.partitions.requests_per_s > verdict.whole.requests_per_s
    assert (verdict.separated, verdict.buy) == (False, WHOLE)
    assert "are level" in verdict.decision and "95% intervals overlap at n=100" in verdict.decision
    # And n=100 gives no upper bound on p99 (it takes 299), so no tail is claimed either
    assert "p99 " in verdict.decision and ", -] at n=100" in verdict.decision
    assert "shorter tail" not in verdict.decision
    # And the same medians measured with many tight samples do separate
    tight = compare_partitions(sweep, [run(0, {8: 20.0}, samples=3000), run(1, {56: 139.0}, samples=3000)])
    assert tight is not None and (tight.verdicts[0].separated, tight.verdicts[0].buy) == (True, PARTITIONED)


def test_the_throughput_interval_is_the_clients_over_the_mean_latency_interval() -> None:
    (shape,) = run(0, {8: 20.0}, spread=0.3, samples=100).shapes
    low, high = throughput_interval(shape) or [None, None]
    assert low is not None and high is not None
    assert low < shape.requests_per_s < high
    half = 1.96 * (shape.std_ms or 0) / 10
    assert high == pytest.approx(shape.requests_per_s * (shape.mean_ms or 0) / ((shape.mean_ms or 0) - half))


def test_a_failed_arm_or_one_over_the_p99_target_gives_no_decision() -> None:
    sweep = parse_sweep(SWEEP)
    failed = RunSummary(index=1, key="k1", run_id="run-1", status="FAILED", error="CapacityStall (F06)")
    result_ = compare_partitions(sweep, [run(0, {8: 20.0}), failed])
    assert result_ is not None
    verdict = result_.verdicts[0]
    assert (verdict.separated, verdict.buy) == (None, None)
    assert verdict.decision == (
        f"no decision on {P4D}: partitions has no point (run failed: CapacityStall (F06))"
    )
    # With a p99 target, the partitions' 56-client point (p99 above 40 ms) does not count; 8 clients do
    capped = parse_sweep({**SWEEP, "partitions": {**SWEEP["partitions"], "p99_ms": 35}})
    result_ = compare_partitions(capped, [run(0, {8: 20.0}), run(1, {8: 30.0, 56: 40.0})])
    assert result_ is not None
    assert result_.verdicts[0].partitions.concurrency == 8
    assert result_.verdicts[0].buy == WHOLE


@pytest.fixture
def aws_bucket() -> str:
    return SETTINGS.bucket


@pytest.fixture
def s3(aws: Aws) -> Any:
    return aws.s3


def test_a_local_sweep_writes_the_comparison_labelled_as_the_cpu_stand_in(s3: Any) -> None:
    # Given both arms measured on the local SageMaker
    sweep = parse_sweep(SWEEP)
    items = expand(sweep)
    for item, p50s in zip(items, [{8: 20.0, 56: 140.0}, {8: 30.0, 56: 40.0}], strict=True):
        measurements = shapes(p50s)
        hosting = {"mode": "inference-component", "instance_type": P4D, "instance_count": 1}
        if item.spec.hosting.gpu_partition:
            hosting |= {"gpu_partition": "mig-1g.5gb", "partitions_per_gpu": 7}
        document = result(
            f"s1-{item.index}",
            measurements,
            hosting=hosting,
            measured_on={**LOCAL_HOST, "partitions": LOCAL_PARTITIONS}
            if "gpu_partition" in hosting
            else LOCAL_HOST,
            benchmark={
                "shapes": [
                    {k: v for k, v in m.items() if k in ShapeStats.model_fields} for m in measurements
                ],
                "seconds": 1.0,
            },
        )
        key = f"results/s1-{item.index}/result.json"
        s3.put_object(Bucket=SETTINGS.bucket, Key=key, Body=json.dumps(document).encode())
    runs = [RunOutcome(index=i.index, key=i.key, run_id=f"s1-{i.index}", status="SUCCEEDED") for i in items]
    # When the sweep is compared and reported
    outcome = compare_sweep(CompareRequest(sweep=sweep, sweep_id="s1", runs=runs), s3=s3, settings=SETTINGS)
    # Then the summary holds the comparison, every decision labelled as the CPU stand-in
    summary = json.loads(
        s3.get_object(Bucket=SETTINGS.bucket, Key="sweeps/mig/s1/summary.json")["Body"].read()
    )
    (verdict,) = summary["partitions"]["verdicts"]
    assert summary["partitions"]["stand_in"] == LOCAL_PARTITIONS == verdict["stand_in"]
    assert verdict["decision"].startswith(f"{LOCAL_PARTITIONS}: buy {P4D} as 56 copies")
    assert summary["runs"][1]["hosting"]["gpu_partition"] == "mig-1g.5gb"
    assert f"{LOCAL_PARTITIONS}: buy" in outcome.summary
    # And the report's section says so before any figure, with both arms side by side
    report = s3.get_object(Bucket=SETTINGS.bucket, Key="sweeps/mig/s1/report.md")["Body"].read().decode()
    section = report.split("## Whole GPUs or partitions")[1]
    assert section.lstrip().startswith(f"**{LOCAL_PARTITIONS}.** These figures are this host's CPU")
    rows = [line for line in section.splitlines() if line.startswith(("| whole GPUs |", "| partitions |"))]
    assert len(rows) == 2 and "| 56 | 1400.0 [" in rows[1]
