"""The sweep report ranks its runs by cost per 1M inferences under a latency target, marks the
recommended run, and shows each instance type's latency and throughput side by side."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.aws import Aws
from tests.support.result_docs import measurement, result
from workflows.aws.storage import download_folder
from workflows.benchmark.results import ShapeStats
from workflows.benchmark.stats import percentile_intervals
from workflows.errors import SpecInvalid
from workflows.reports.cost import price_table
from workflows.settings import Settings
from workflows.sweeps.compare import RunSummary
from workflows.sweeps.download import finish_folder
from workflows.sweeps.recommend import recommend
from workflows.sweeps.report import CompareRequest, RunOutcome, compare_sweep
from workflows.sweeps.spec import RecommendPolicy, expand, load_sweep, parse_sweep

SETTINGS = Settings(bucket="sweep-bucket", sagemaker_role_arn="arn:aws:iam::123456789012:role/sm")
SMALL, LARGE = "ml.c6i.xlarge", "ml.c6i.2xlarge"
SWEEP = {
    "name": "pick",
    "base": {"model": {"task": "embedding"}, "benchmark": {"batch_sizes": [1, 8], "concurrency": [1, 4]}},
    "matrix": {"instance_types": [SMALL, LARGE]},
    "recommend": {"p99_ms": 100, "batch_size": 8},
}


def shapes(p50_by_concurrency: dict[int, float]) -> list[dict[str, Any]]:
    """Batch 1 and 8 at each concurrency; batch 8 takes the given median."""
    return [measurement(p50 / 4, batch=1, concurrency=c, seed=c) for c, p50 in p50_by_concurrency.items()] + [
        measurement(p50, batch=8, concurrency=c, seed=10 + c) for c, p50 in p50_by_concurrency.items()
    ]


def summary_run(
    index: int, instance_type: str, p50_by_concurrency: dict[int, float], **extra: Any
) -> RunSummary:
    return RunSummary(
        index=index,
        key=f"bundled · realtime · {instance_type}",
        run_id=f"run-{index}",
        status="SUCCEEDED",
        shapes=[
            ShapeStats.model_validate({k: v for k, v in m.items() if k in ShapeStats.model_fields})
            for m in shapes(p50_by_concurrency)
        ],
        hosting={"mode": "realtime", "instance_type": instance_type, "instance_count": 1},
        **extra,
    )


def test_the_cheapest_run_under_the_target_is_recommended() -> None:
    # Given the small type, at 4 clients, within 100 ms; the large one twice the price, slightly faster
    runs = [summary_run(0, SMALL, {1: 40.0, 4: 80.0}), summary_run(1, LARGE, {1: 30.0, 4: 60.0})]
    # When the runs are ranked for p99 <= 100 ms at batch 8
    recommendation = recommend(runs, RecommendPolicy(p99_ms=100, batch_size=8))
    # Then the small type wins, at the concurrency where it is cheapest
    first, second = recommendation.ranked
    assert (first.rank, first.recommended, first.point.instance_type, first.point.concurrency) == (
        1,
        True,
        SMALL,
        4,
    )
    assert (second.rank, second.recommended, second.point.instance_type) == (2, False, LARGE)
    assert recommendation.recommended_run_id == "run-0"
    # And the cost is the price table's hourly rate over the measured throughput
    hourly = price_table()["sagemaker"]["inference_instance_hour"][SMALL]
    assert first.point.cost_per_million == pytest.approx(
        hourly / (first.point.samples_per_s * 3600) * 1e6, rel=1e-3
    )
    assert first.point.cost_per_million < second.point.cost_per_million


def test_a_run_over_the_target_is_not_ranked_and_says_why() -> None:
    # Given the small type too slow at batch 8 at every concurrency
    runs = [summary_run(0, SMALL, {1: 150.0, 4: 400.0}), summary_run(1, LARGE, {1: 50.0, 4: 90.0})]
    recommendation = recommend(runs, RecommendPolicy(p99_ms=100, batch_size=8))
    top, missed = recommendation.ranked
    assert top.point.instance_type == LARGE and top.recommended
    assert missed.rank is None and not missed.recommended
    assert missed.reason.startswith("b8/natural: p99 1") and missed.reason.endswith("> 100 ms")
    # And a point with errors never qualifies
    broken = summary_run(2, SMALL, {1: 20.0})
    for shape in broken.shapes:
        shape.errors = 3
    reason = recommend([broken], RecommendPolicy(p99_ms=100, batch_size=8)).ranked[0].reason
    assert reason == "b8/natural: 3 errors"


def test_a_mixed_fleet_run_is_not_recommended_as_a_type() -> None:
    # Given the cheapest run measured while two pooled types served (a scale-out onto the second pool)
    mixed = summary_run(0, SMALL, {1: 10.0, 4: 20.0})
    mixed.hosting |= {"served_instance_types": {SMALL: 1, LARGE: 1}, "mixed_fleet": True}
    runs = [mixed, summary_run(1, LARGE, {1: 30.0, 4: 60.0})]
    # When ranked, Then the one-type run is recommended and the mixed one says why it is not
    recommendation = recommend(runs, RecommendPolicy(p99_ms=100, batch_size=8))
    top, left_out = recommendation.ranked
    assert (top.run_id, top.recommended) == ("run-1", True)
    assert left_out.rank is None and left_out.reason.startswith("mixed fleet (ml.c6i.xlarge, ml.c6i.2xlarge)")


def test_an_unstable_point_ranks_after_every_stable_one_and_is_flagged() -> None:
    # Given the cheaper small type measured unstably, the large one stably
    cheap, steady = summary_run(0, SMALL, {4: 80.0}), summary_run(1, LARGE, {4: 60.0})
    for shape in cheap.shapes:
        shape.stable = False
    recommendation = recommend([cheap, steady], RecommendPolicy(p99_ms=100, batch_size=8))
    # Then the stable run is recommended, and the unstable one follows, flagged for re-measuring
    first, second = recommendation.ranked
    assert first.point is not None and second.point is not None
    assert (first.point.instance_type, first.recommended, first.reason) == (LARGE, True, "")
    assert (second.rank, second.point.instance_type, second.point.stable) == (2, SMALL, False)
    assert second.reason.startswith("meets the target but was not stable")
    assert (second.point.cost_per_million or 0) < (first.point.cost_per_million or 0)


def test_the_recommend_block_must_name_a_measured_batch_size() -> None:
    with pytest.raises(
        SpecInvalid,
        match=r"recommend.batch_size 16 is not measured by any run \(batch sizes measured: \[1, 8\]\)",
    ):
        parse_sweep({**SWEEP, "recommend": {"p99_ms": 100, "batch_size": 16}})
    with pytest.raises(SpecInvalid, match="recommend.p99_ms"):
        parse_sweep({**SWEEP, "recommend": {"batch_size": 8}})


@pytest.fixture
def aws_bucket() -> str:
    return SETTINGS.bucket


@pytest.fixture
def s3(aws: Aws) -> Any:
    return aws.s3


def test_a_sweep_over_two_instance_types_reports_a_ranked_recommendation(s3: Any, tmp_path: Path) -> None:
    # Given a sweep over two instance types whose runs wrote their result.json
    sweep = parse_sweep(SWEEP)
    items = expand(sweep)
    for item, (instance_type, p50s) in zip(
        items, [(SMALL, {1: 40.0, 4: 80.0}), (LARGE, {1: 30.0, 4: 60.0})], strict=True
    ):
        measurements = shapes(p50s)
        document = result(
            f"s1-{item.index}",
            measurements,
            hosting={"mode": "realtime", "instance_type": instance_type, "instance_count": 1},
            benchmark={
                "shapes": [
                    {k: v for k, v in m.items() if k in ShapeStats.model_fields} for m in measurements
                ],
                "seconds": 1.0,
            },
        )
        s3.put_object(
            Bucket=SETTINGS.bucket,
            Key=f"results/s1-{item.index}/result.json",
            Body=json.dumps(document).encode(),
        )
        for name in ("report.md", "latency_vs_batch.png", "benchmark.json"):
            s3.put_object(Bucket=SETTINGS.bucket, Key=f"results/s1-{item.index}/{name}", Body=b"x")
    runs = [RunOutcome(index=i.index, key=i.key, run_id=f"s1-{i.index}", status="SUCCEEDED") for i in items]
    # When the sweep is compared and reported
    outcome = compare_sweep(CompareRequest(sweep=sweep, sweep_id="s1", runs=runs), s3=s3, settings=SETTINGS)
    # Then the outcome names the recommended run, and the summary line says what to use
    assert outcome.recommended_run_id == "s1-0"
    assert f"recommended: {SMALL} realtime at 4 concurrent clients" in outcome.summary
    summary = json.loads(
        s3.get_object(Bucket=SETTINGS.bucket, Key="sweeps/pick/s1/summary.json")["Body"].read()
    )
    assert [r["point"]["instance_type"] for r in summary["recommendation"]["ranked"]] == [SMALL, LARGE]
    assert summary["runs"][0]["hosting"]["instance_type"] == SMALL
    # And the report has the ranking with the recommended row marked, and the side-by-side table
    report = s3.get_object(Bucket=SETTINGS.bucket, Key="sweeps/pick/s1/report.md")["Body"].read().decode()
    rows = [line for line in report.splitlines() if line.startswith("| 1 | **recommended** |")]
    assert len(rows) == 1 and f"| {SMALL} | realtime | 4 |" in rows[0]
    assert "Target: p99 ≤ 100 ms at batch size 8, every measured sequence length." in report
    side = report.split("### Latency and throughput side by side (batch size 8)")[1].splitlines()
    header = next(line for line in side if line.startswith("| instance type"))
    assert header == "| instance type | mode | 1 clients | 4 clients |"
    assert sum(line.startswith(f"| {t} | realtime |") for line in side for t in (SMALL, LARGE)) == 2
    # And it opens with the decision sentence
    assert report.splitlines()[2] == f"**Decision: {summary['decision']}.**"
    assert summary["decision"].startswith(f"recommended: {SMALL} realtime")
    # When the CLI brings the sweep's folder to disk
    folder = tmp_path / "s1"
    download_folder(s3, f"s3://{SETTINGS.bucket}/sweeps/pick/s1/", folder)
    written, decision = finish_folder(s3, SETTINGS.bucket, folder)
    # Then each run's result.json, report.md and plots are under runs/<run id>/ (not the engine's detail)
    for run in ("s1-0", "s1-1"):
        assert {p.name for p in (folder / "runs" / run).rglob("*")} == {
            "result.json",
            "report.md",
            "latency_vs_batch.png",
        }
    # And the sweep's plots are drawn and linked from its report, which links each run's report
    assert (folder / "plots" / "p99_vs_throughput.png").stat().st_size > 1000
    assert (folder / "plots" / "cost_vs_p99.png").stat().st_size > 1000
    local_report = (folder / "report.md").read_text()
    assert "![p99 against throughput per instance type](plots/p99_vs_throughput.png)" in local_report
    assert "- [s1-0](runs/s1-0/report.md)" in local_report
    assert decision == summary["decision"]
    assert folder / "plots" / "cost_vs_p99.png" in written


def test_the_example_recommend_sweep_is_valid_and_prices_every_type() -> None:
    sweep = load_sweep("examples/sweep-recommend.yaml")
    assert sweep.recommend == RecommendPolicy(p99_ms=100, batch_size=8)
    listed = price_table()["sagemaker"]["inference_instance_hour"]
    assert all(item.spec.hosting.instance_type_fallbacks[0] in listed for item in expand(sweep))  # type: ignore[union-attr]


RECORDED = Path(__file__).resolve().parents[1] / "data" / "recorded"


def recorded_runs(name: str) -> list[RunSummary]:
    """The runs of a summary.json a real local sweep wrote (``deploybench sweep ... --local``)."""
    summary = json.loads((RECORDED / name).read_text(encoding="utf-8"))
    return [RunSummary.model_validate(r) for r in summary["runs"]]


def test_a_recorded_local_sweep_says_why_no_type_meets_100_ms_and_which_has_no_price() -> None:
    # Given the summary of a real local sweep over ml.c6i.xlarge and ml.c7i.xlarge on a busy 2-CPU host
    runs = recorded_runs("sweep-nightly-local-summary.json")
    assert {r.hosting["instance_type"] for r in runs} == {"ml.c6i.xlarge", "ml.c7i.xlarge"}
    # When they are ranked for the nightly sweep's target
    strict = recommend(runs, RecommendPolicy(p99_ms=100, batch_size=8))
    # Then none is recommended, and each says which shape was too slow, with its p99
    assert strict.local and strict.recommended_run_id is None
    assert all(
        r.rank is None and re.fullmatch(r"b8/\w+: p99 [\d.]+ ms > 100 ms", r.reason) for r in strict.ranked
    )
    # And under a target the host meets, the priced type is ranked; the unpriced one says why not
    loose = recommend(runs, RecommendPolicy(p99_ms=60_000, batch_size=8))
    first, second = loose.ranked
    assert first.recommended and first.point is not None and first.point.instance_type == "ml.c6i.xlarge"
    assert second.rank is None and second.reason == "no price for ml.c7i.xlarge in the price table"
    # And the recommended point is the run's cheapest measured concurrency at batch 8
    costs = [p.cost_per_million for p in loose.points if p.run_id == first.run_id]
    assert first.point.cost_per_million == min(c for c in costs if c is not None)


def test_a_recorded_local_sweep_over_two_priced_types_gives_a_ranked_recommendation() -> None:
    # Given the summary of a real local sweep over ml.c6i.xlarge and ml.m5.xlarge (batch 8, 1 and 4 clients)
    runs = recorded_runs("sweep-pick-instance-local-summary.json")
    # When they are ranked under a target that host meets
    recommendation = recommend(runs, RecommendPolicy(p99_ms=3000, batch_size=8))
    # Then both are ranked, cheapest per 1M first among the stable ones, and the first is recommended
    ranked = [r for r in recommendation.ranked if r.rank is not None]
    assert [r.rank for r in ranked] == [1, 2] and [r.recommended for r in ranked] == [True, False]
    points = [r.point for r in ranked if r.point is not None]
    assert {p.instance_type for p in points} == {"ml.c6i.xlarge", "ml.m5.xlarge"}
    stable_first = sorted(points, key=lambda p: (not p.stable, p.cost_per_million or 0.0))
    assert points == stable_first
    assert all(p.meets_target and (p.p99_ms or 0) <= 3000 for p in points)
    # And each point is the run's cheapest concurrency that meets the target (stable ones first)
    for point in points:
        mine = [p for p in recommendation.points if p.run_id == point.run_id and p.meets_target]
        assert point == min(mine, key=lambda p: (not p.stable, p.cost_per_million or 0.0))


M5 = "ml.m5.xlarge"


def interval_run(
    index: int, instance_type: str, p50: float, *, samples: int, spread: float, local: bool = False
) -> RunSummary:
    """A run measured at batch 8 and 4 clients, its figures with their 95% intervals as the engine records them."""
    m = measurement(p50, batch=8, concurrency=4, samples=samples, spread=spread, seed=100 + index)
    m.update(percentile_intervals(np.asarray(m["latencies_ms"])))
    where = {"where": "local", "cpu": {"model": "host CPU", "logical_cpus": 2}} if local else None
    return RunSummary(
        index=index,
        key=f"bundled · realtime · {instance_type}",
        run_id=f"run-{index}",
        status="SUCCEEDED",
        shapes=[ShapeStats.model_validate({k: v for k, v in m.items() if k in ShapeStats.model_fields})],
        hosting={"mode": "realtime", "instance_type": instance_type, "instance_count": 1},
        measured_on=where,
    )


def test_two_runs_on_one_host_whose_samples_agree_are_indistinguishable_and_the_cheaper_is_picked() -> None:
    # Given ml.m5.xlarge measured 12% faster than ml.c6i.xlarge on the same host, from 40 noisy samples
    # (so m5's cost per 1M reads lower, though it costs more an hour)
    runs = [
        interval_run(0, SMALL, 80.0, samples=40, spread=0.4, local=True),
        interval_run(1, M5, 70.0, samples=40, spread=0.4, local=True),
    ]
    # When the runs are ranked for p99 <= 500 ms at batch 8
    recommendation = recommend(runs, RecommendPolicy(p99_ms=500, batch_size=8))
    # Then their medians cannot be told apart at this n: the cheaper by the hour is recommended
    apart = recommendation.separation
    assert apart is not None and apart.distinguishable is False and apart.n == 40
    assert apart.n_to_separate is not None and apart.n_to_separate > 40
    assert recommendation.ranked[0].point.instance_type == SMALL
    assert recommendation.decision.startswith(f"{SMALL} and {M5} are indistinguishable at this n (n=40")
    assert "pick the cheaper" in recommendation.decision
    # And both are marked as measured on a shared host
    assert all(r.point.shared_host for r in recommendation.ranked)


def test_runs_whose_intervals_do_not_overlap_are_ranked_by_cost_with_the_p99_interval_stated() -> None:
    # Given 600 tight samples each: c6i at 80 ms, the same-priced c5 at 60 ms
    runs = [
        interval_run(0, SMALL, 80.0, samples=600, spread=0.02),
        interval_run(1, "ml.c5.xlarge", 60.0, samples=600, spread=0.02),
    ]
    # When ranked
    recommendation = recommend(runs, RecommendPolicy(p99_ms=500, batch_size=8))
    # Then the difference is measured: the faster, cheaper per 1M, is recommended, with its interval and n
    assert recommendation.separation is not None and recommendation.separation.distinguishable is True
    assert recommendation.ranked[0].point.instance_type == "ml.c5.xlarge"
    assert recommendation.decision.startswith("recommended: ml.c5.xlarge realtime at 4 concurrent clients")
    assert "95% CI" in recommendation.decision and "n=600" in recommendation.decision


def test_when_none_meets_the_target_the_decision_names_the_closest() -> None:
    # Given two runs both far over a 10 ms target
    runs = [
        interval_run(0, SMALL, 80.0, samples=100, spread=0.05),
        interval_run(1, M5, 60.0, samples=100, spread=0.05),
    ]
    # When ranked
    recommendation = recommend(runs, RecommendPolicy(p99_ms=10, batch_size=8))
    # Then the decision says none met it and which came closest, with its p99 interval (unbounded above at n=100)
    closest = min(p.p99_ms for p in recommendation.points if p.p99_ms is not None)
    assert recommendation.decision.startswith(
        f"none met p99 ≤ 10 ms; the closest was {M5} realtime at {closest:.2f} ms"
    )
    assert "unbounded above" in recommendation.decision and "n=100" in recommendation.decision


def serverless_run(index: int, provisioned: int | None) -> RunSummary:
    hosting: dict[str, Any] = {"mode": "serverless", "instance_type": "serverless", "memory_size_mb": 3072}
    if provisioned:
        hosting["provisioned_concurrency"] = provisioned
    run = summary_run(index, "serverless", {1: 40.0})
    return run.model_copy(update={"hosting": hosting, "key": f"bundled · serverless · 3072 MB · {index}"})


def test_serverless_on_demand_and_provisioned_are_told_apart_and_priced_by_their_own_rates() -> None:
    # Given the same serverless endpoint on demand and with two provisioned, and a table holding the
    # provisioned rates
    table = price_table()
    prices = {
        **table,
        "sagemaker": {
            **table["sagemaker"],
            "serverless_provisioned_concurrency_gb_second": 1e-6,
            "serverless_provisioned_inference_gb_second": 1e-5,
        },
    }
    policy = RecommendPolicy(p99_ms=1000, batch_size=8)
    ranked = recommend([serverless_run(0, None), serverless_run(1, 2)], policy, prices)
    by_run = {r.run_id: r.point for r in ranked.ranked if r.point}
    # Then each names how it serves, and the provisioned one costs its held concurrency on top
    assert by_run["run-0"].instance_type == "3072 MB serverless, on demand"
    assert by_run["run-1"].instance_type == "3072 MB serverless, 2 provisioned"
    assert by_run["run-1"].cost_per_million != by_run["run-0"].cost_per_million
    # And with the table as shipped (no provisioned rate), the provisioned run is unpriced, never guessed
    unpriced = recommend([serverless_run(0, None), serverless_run(1, 2)], policy, table)
    missed = next(r for r in unpriced.ranked if r.run_id == "run-1")
    assert missed.point is not None and missed.point.cost_per_million is None
    assert "no price" in (missed.reason or missed.point.reason)
