"""Results, reports, comparisons, cost and the endpoint's CloudWatch view."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from tests.support.result_docs import measurement, result
from workflows.benchmark.cloudwatch import endpoint_metrics
from workflows.errors import ResultInvalid
from workflows.reports.compare import (
    IMPROVEMENT,
    INDISTINGUISHABLE,
    NO_VERDICT,
    REGRESSION,
    WITHIN_NOISE,
    compare,
    latency_verdict,
)
from workflows.reports.cost import price_table
from workflows.reports.files import write_report
from workflows.reports.result import load_result
from workflows.reports.tables import verdict_cells

PNG = b"\x89PNG\r\n\x1a\n"


def test_an_unchanged_endpoint_is_within_noise() -> None:
    rows = compare(result("a", [measurement(20.0, seed=1)]), result("b", [measurement(20.0, seed=2)]))
    assert [r["verdict"] for r in rows] == [WITHIN_NOISE]


def test_samples_that_agree_are_indistinguishable_at_this_n_with_the_n_that_would_separate_them() -> None:
    # Given two runs of 60 noisy samples each, medians 1.5% apart
    base = result("a", [measurement(20.0, samples=60, spread=0.1, seed=1)])
    other = result("b", [measurement(20.3, samples=60, spread=0.1, seed=2)])
    # When compared
    (row,) = compare(base, other)
    latency = row["latency"]
    # Then no difference is stated: indistinguishable at this n, and more samples would be needed
    assert latency["verdict"] == WITHIN_NOISE and latency["reason"] == INDISTINGUISHABLE
    assert latency["n"] == [60, 60] and latency["n_to_separate"] > 60
    low, high = latency["diff_ms_ci95"]
    assert low <= 0 <= high
    # And the report's verdict cell says so, with the n
    assert (
        f"{INDISTINGUISHABLE}: n 60/60; about {latency['n_to_separate']} samples each"
        in verdict_cells(row)[1]
    )


def test_a_slower_endpoint_is_a_regression_and_a_faster_one_an_improvement() -> None:
    base = result("a", [measurement(20.0, seed=1)])
    slower = compare(base, result("b", [measurement(24.0, seed=2)]))[0]
    faster = compare(base, result("c", [measurement(16.0, seed=3)]))[0]
    assert slower["verdict"] == REGRESSION and slower["latency"]["median_change"] == pytest.approx(
        0.2, abs=0.02
    )
    assert slower["latency"]["diff_ms_ci95"][0] > 0
    assert faster["verdict"] == IMPROVEMENT


def test_throughput_is_judged_by_resampling_with_its_interval_not_by_windows_overlapping() -> None:
    # Given the same endpoint measured twice (medians 1.5% apart, 60 noisy samples each), then a slower one
    base = result("a", [measurement(20.0, samples=60, spread=0.1, seed=1)])
    same = compare(base, result("b", [measurement(20.3, samples=60, spread=0.1, seed=2)]))[0]["throughput"]
    slower = compare(base, result("c", [measurement(24.0, seed=3)]))[0]["throughput"]
    # Then the first difference is not called: the bootstrap interval of the change holds zero
    low, high = same["change_ci95"]
    assert same["verdict"] == WITHIN_NOISE and same["reason"] == INDISTINGUISHABLE and low <= 0 <= high
    # And the slower endpoint's throughput fell: its whole interval is below zero, about 1/1.2 - 1
    assert slower["verdict"] == REGRESSION and slower["change_ci95"][1] < 0
    assert slower["mean_change"] == pytest.approx(20.0 / 24.0 - 1, abs=0.03)


@pytest.mark.parametrize(("p50", "called"), [(20.8, REGRESSION), (19.2, IMPROVEMENT)])
def test_a_change_below_the_practical_minimum_is_never_called(p50: float, called: str) -> None:
    # Given a 4 % shift: beyond the runs' 2 % window noise, its interval far from zero
    base, other = result("a", [measurement(20.0, seed=1)]), result("b", [measurement(p50, seed=2)])
    # When it is judged with no practical minimum, then with a 5 % one
    plain = compare(base, other)[0]
    floored = compare(base, other, min_change_pct=5)[0]
    # Then the plain comparison calls it, on latency and throughput alike
    assert (plain["verdict"], plain["latency"]["verdict"], plain["throughput"]["verdict"]) == (called,) * 3
    assert plain["latency"]["min_change"] == 0.0
    # And under the 5 % floor neither is called, whatever the interval says
    assert (floored["verdict"], floored["latency"]["verdict"], floored["throughput"]["verdict"]) == (
        WITHIN_NOISE,
    ) * 3
    assert floored["latency"]["diff_ms_ci95"] == plain["latency"]["diff_ms_ci95"]
    assert floored["latency"]["min_change"] == 0.05


def test_a_difference_inside_the_runs_own_window_noise_is_not_called() -> None:
    # Given runs whose own windows spread by ±8% (noisy), and a 3% shift
    noisy = [measurement(20.0, seed=1), measurement(20.6, seed=2)]
    for m in noisy:
        m["windows"] = [
            dict(w, p50_ms=w["p50_ms"] * f) for w, f in zip(m["windows"], (0.92, 1.0, 1.08), strict=True)
        ]
    verdict = latency_verdict(noisy[0], noisy[1])
    assert verdict["verdict"] == WITHIN_NOISE
    assert verdict["noise"] > abs(verdict["median_change"])


@pytest.mark.parametrize(
    ("candidate", "reason"),
    [
        (measurement(30.0, samples=12), "12 latency samples"),
        (measurement(30.0, stable=False), "did not reach a stable"),
    ],
)
def test_too_few_samples_or_an_unstable_run_gives_no_verdict(candidate: dict[str, Any], reason: str) -> None:
    row = compare(result("a", [measurement(20.0)]), result("b", [candidate]))[0]
    assert row["verdict"] == NO_VERDICT
    assert reason in row["latency"]["reason"]


def test_cost_covers_the_endpoints_whole_life_and_per_million_at_measured_throughput() -> None:
    prices = price_table()
    data = result("a", [measurement(10.0, batch=8)])
    cost = data["cost"]
    # 30 minutes of ml.c6i.xlarge at the table's price
    hourly = prices["sagemaker"]["inference_instance_hour"]["ml.c6i.xlarge"]
    assert cost["lines"][0]["quantity"] == 0.5
    assert cost["total"] == pytest.approx(0.5 * hourly)
    # 100 requests/s of 8 samples: 800 samples/s
    [row] = cost["per_million_inferences"]
    assert row["cost_per_million"] == pytest.approx(hourly / (800 * 3600) * 1e6, rel=1e-3)
    assert cost["prices_taken"] == str(prices["taken"])


def test_scale_to_zero_pays_its_scale_in_tail_and_serverless_pays_gb_seconds() -> None:
    tail = result(
        "s2z", [measurement(10.0)], hosting={"mode": "scale-to-zero", "instance_type": "ml.g5.xlarge"}
    )
    [_, lag] = tail["cost"]["lines"]
    assert lag["item"].startswith("scale-in tail") and lag["quantity"] == pytest.approx(26 / 60, rel=1e-3)
    serverless = result(
        "sls", [measurement(100.0, samples=300)], hosting={"mode": "serverless", "memory_size_mb": 2048}
    )
    [compute] = serverless["cost"]["lines"]
    busy_s = serverless["measurements"][0]["mean_ms"] / 1000 * 300
    assert compute["unit"] == "GB-second" and compute["quantity"] == pytest.approx(2 * busy_s, rel=1e-3)


def test_a_price_missing_from_the_table_is_reported_missing_not_guessed() -> None:
    data = result("x", [measurement(10.0)], hosting={"mode": "realtime", "instance_type": "ml.x9.huge"})
    assert data["cost"]["complete"] is False
    assert data["cost"]["lines"][0]["cost"] is None
    assert "no price in the table" in data["cost"]["lines"][0]["note"]
    assert data["cost"]["per_million_inferences"][0]["cost_per_million"] is None


def test_one_result_gives_a_full_report_with_three_plots(tmp_path: Path) -> None:
    data = result("a", [measurement(10.0), measurement(14.0, batch=8), measurement(7.0, concurrency=4)])
    written = write_report([data], tmp_path, with_result=True)
    names = {p.name for p in written}
    assert names == {
        "result.json",
        "report.md",
        "latency_vs_batch.png",
        "throughput_vs_concurrency.png",
        "cost_per_million.png",
    }
    assert all((tmp_path / n).read_bytes().startswith(PNG) for n in names if n.endswith(".png"))
    report = (tmp_path / "report.md").read_text()
    assert report.startswith("# deploybench run a")
    assert "![Latency percentiles vs batch size](latency_vs_batch.png)" in report
    assert "| 8 | natural | 1 | " in report and "## Cost (USD, us-east-1" in report


def test_several_results_give_a_comparison_with_verdicts(tmp_path: Path) -> None:
    base = tmp_path / "a.json"
    base.write_text(json.dumps(result("a", [measurement(20.0, seed=1)])))
    other = tmp_path / "b.json"
    other.write_text(json.dumps(result("b", [measurement(26.0, seed=2)])))
    write_report([load_result(base), load_result(other)], tmp_path / "out")
    report = (tmp_path / "out" / "report.md").read_text()
    assert report.startswith("# deploybench comparison")
    # Then the verdict row shows both verdicts, the median's change with its interval, and the noise
    [row] = [line for line in report.splitlines() if line.startswith("| 1 | natural | 1 | **")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert (cells[3], cells[4], cells[8]) == ("**regression**", "regression", "regression")
    assert 28 < float(cells[5].rstrip("%")) < 32  # 20 ms -> 26 ms
    low, high = (float(x) for x in cells[6].split(" .. "))
    assert 5 < low < high < 7
    assert (cells[7], cells[10]) == ("2.0%", "2.0%")  # the windows' own spread


def test_schema_1_results_still_load_and_unknown_versions_are_refused(tmp_path: Path) -> None:
    old = tmp_path / "v1.json"
    shapes = [{k: v for k, v in measurement(10.0).items() if k not in {"windows", "latencies_ms"}}]
    old.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "status": "SUCCEEDED",
                "run_id": "old",
                "spec": {"hosting": {"mode": "realtime", "instance_count": 1}},
                "deploy": {"instance_type": "ml.c6i.xlarge"},
                "benchmark": {"shapes": shapes},
            }
        )
    )
    loaded = load_result(old)
    assert loaded["measurements"][0]["p50_ms"] == shapes[0]["p50_ms"]
    assert compare(loaded, loaded)[0]["verdict"] == NO_VERDICT
    future = tmp_path / "v9.json"
    future.write_text('{"schema_version": 9}')
    with pytest.raises(ResultInvalid, match="schema_version 9"):
        load_result(future)
    with pytest.raises(ResultInvalid, match="does not exist"):
        load_result(tmp_path / "missing.json")


def test_cloudwatch_is_not_faked_for_an_endpoint_not_served_by_sagemaker() -> None:
    figures = endpoint_metrics(
        None, endpoint_url="http://127.0.0.1:8080", endpoint_name="e", variant_name="primary", measurements=[]
    )
    assert figures["available"] is False
    assert figures["reason"].startswith("not available locally")


def test_cloudwatch_latencies_are_read_in_microseconds_and_shown_in_ms() -> None:
    # Given two measurements whose 10 s periods overlap on an AWS endpoint
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    first, second = measurement(20.0), measurement(22.0, batch=8)
    second["started_at"], second["ended_at"] = 1_800_000_025.0, 1_800_000_050.0
    with Stubber(cloudwatch) as stub:
        for index, model_p50 in ((0, 18_000.0), (1, 19_500.0)):
            values = {
                f"m{index}_modellatency_p50": model_p50,
                f"m{index}_modellatency_p99": 30_000.0,
                f"m{index}_modellatency_average": 18_500.0,
                f"m{index}_overheadlatency_p50": 1_200.0,
                f"m{index}_overheadlatency_p99": 4_000.0,
                f"m{index}_overheadlatency_average": 1_500.0,
                f"m{index}_invocations_samplecount": 600.0,
            }
            stub.add_response(
                "get_metric_data",
                {"MetricDataResults": [{"Id": k, "Values": [v]} for k, v in values.items()]},
            )
        figures = endpoint_metrics(
            cloudwatch,
            endpoint_url="https://runtime.sagemaker.us-east-1.amazonaws.com",
            endpoint_name="e",
            variant_name="primary",
            measurements=[first, second],
        )
    # Then the figures are in ms, and both are flagged as sharing their period
    assert figures["available"] is True
    assert [s["ModelLatency_p50_ms"] for s in figures["shapes"]] == [18.0, 19.5]
    assert figures["shapes"][0]["OverheadLatency_p50_ms"] == 1.2
    assert all(s["shares_minutes_with_other_shapes"] for s in figures["shapes"])
    assert figures["shapes"][0]["cloudwatch_invocations"] == 600


def test_the_instances_utilisation_is_read_for_each_measurements_window_per_core_and_per_gpu() -> None:
    # Given a 40 s measurement on a 4-vCPU, 1-GPU instance (ml.g5.xlarge) served by SageMaker
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    shape = measurement(20.0)
    shape["started_at"], shape["ended_at"] = 1_800_000_003.0, 1_800_000_043.0
    with Stubber(cloudwatch) as stub:
        stub.add_response("get_metric_data", {"MetricDataResults": []})
        stub.add_response(
            "get_metric_data",
            {
                "MetricDataResults": [
                    # Summed over cores: 4 vCPUs fully busy read 400%
                    {"Id": "u_cpu_pct", "Values": [360.0, 380.0, 370.0, 374.0]},
                    {"Id": "u_memory_pct", "Values": [41.0, 43.0]},
                    {"Id": "u_gpu_pct", "Values": [55.0]},
                    {"Id": "u_gpu_memory_pct", "Values": []},
                ]
            },
            {
                "MetricDataQueries": ANY,
                # The window rounded out to the 10 s the endpoint config publishes at
                "StartTime": datetime.fromtimestamp(1_800_000_000, UTC),
                "EndTime": datetime.fromtimestamp(1_800_000_050, UTC),
            },
        )
        figures = endpoint_metrics(
            cloudwatch,
            endpoint_url="https://runtime.sagemaker.us-east-1.amazonaws.com",
            endpoint_name="e",
            variant_name="primary",
            measurements=[shape],
            instance_type="ml.g5.xlarge",
        )
    # Then each figure reads 0-100% of the instance, with no GPU memory where none was published
    used = figures["shapes"][0]["utilisation"]
    assert used == {
        "source": "cloudwatch",
        "cpu_pct": 92.8,
        "memory_pct": 42.0,
        "gpu_pct": 55.0,
        "gpu_memory_pct": None,
        "started_at": 1_800_000_000.0,
        "ended_at": 1_800_000_050.0,
    }
    # And the measurement carries it into result.json, where the report flags the CPU ceiling
    from workflows.benchmark.cloudwatch import with_cloudwatch_view
    from workflows.benchmark.results import Utilisation

    with_cloudwatch_view([shape], figures)
    assert Utilisation.model_validate(shape["utilisation"]).ceilings() == ["CPU 93% >= 90%"]


def test_serverless_has_no_instance_to_read_utilisation_from() -> None:
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    with Stubber(cloudwatch) as stub:
        stub.add_response("get_metric_data", {"MetricDataResults": []})
        figures = endpoint_metrics(
            cloudwatch,
            endpoint_url="https://runtime.sagemaker.us-east-1.amazonaws.com",
            endpoint_name="e",
            variant_name="primary",
            measurements=[measurement(20.0)],
            instance_type=None,
        )
    assert figures["shapes"][0]["utilisation"] is None
