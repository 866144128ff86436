"""The endpoint's own latency on AWS: CloudWatch's ModelLatency over each measurement's 10 s period,
read through recorded GetMetricData answers in botocore's shapes (the Stubber validates both the
request and the answer against botocore's cloudwatch model), set beside the client's figures."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from tests.support.result_docs import measurement, result
from workflows.benchmark.cloudwatch import PERIOD_S, endpoint_metrics, period_range, with_cloudwatch_view
from workflows.benchmark.results import ShapeStats
from workflows.reports.markdown import render_report

AWS_URL = "https://runtime.sagemaker.us-east-1.amazonaws.com"


@pytest.mark.parametrize(
    ("started", "ended", "period"),
    [
        (1_800_000_003.0, 1_800_000_009.0, (1_800_000_000, 1_800_000_010)),
        (1_800_000_003.0, 1_800_000_021.0, (1_800_000_000, 1_800_000_030)),
        (1_800_000_003.0, 1_800_000_043.0, (1_800_000_000, 1_800_000_060)),
        # Past a minute CloudWatch takes whole minutes only
        (1_800_000_003.0, 1_800_000_075.0, (1_800_000_000, 1_800_000_120)),
    ],
)
def test_each_measurement_is_read_over_one_period_cloudwatch_accepts(
    started: float, ended: float, period: tuple[int, int]
) -> None:
    assert period_range(started, ended) == period
    assert PERIOD_S == 10


def recorded_answer(index: int, *, p50_us: float, p99_us: float, invocations: float) -> dict[str, Any]:
    """GetMetricData's answer as CloudWatch gives it: one result per query Id, values in microseconds."""
    values = {
        f"m{index}_modellatency_p50": p50_us,
        f"m{index}_modellatency_p99": p99_us,
        f"m{index}_modellatency_average": p50_us * 1.05,
        f"m{index}_overheadlatency_p50": 900.0,
        f"m{index}_overheadlatency_p99": 2_500.0,
        f"m{index}_overheadlatency_average": 1_000.0,
        f"m{index}_invocations_samplecount": invocations,
    }
    return {
        "MetricDataResults": [
            {
                "Id": key,
                "Label": key,
                "Timestamps": [datetime.fromtimestamp(1_800_000_000, UTC)],
                "Values": [value],
                "StatusCode": "Complete",
            }
            for key, value in values.items()
        ],
        "Messages": [],
    }


def test_modellatency_for_the_window_becomes_the_server_side_figure_beside_the_clients() -> None:
    # Given a 30 s measurement at client p50 20 ms on a SageMaker endpoint
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    shape = measurement(20.0)
    with Stubber(cloudwatch) as stub:
        # When CloudWatch answers ModelLatency p50 17.5 ms, p99 26 ms for that window's own period
        stub.add_response(
            "get_metric_data",
            recorded_answer(0, p50_us=17_500.0, p99_us=26_000.0, invocations=600.0),
            {
                "MetricDataQueries": [
                    {
                        "Id": query_id,
                        "MetricStat": {
                            "Metric": {
                                "Namespace": "AWS/SageMaker",
                                "MetricName": metric,
                                "Dimensions": [
                                    {"Name": "EndpointName", "Value": "e"},
                                    {"Name": "VariantName", "Value": "primary"},
                                ],
                            },
                            "Period": 30,
                            "Stat": stat,
                        },
                        "ReturnData": True,
                    }
                    for metric, stats in (
                        ("ModelLatency", ("p50", "p99", "Average")),
                        ("OverheadLatency", ("p50", "p99", "Average")),
                        ("Invocations", ("SampleCount",)),
                    )
                    for stat in stats
                    for query_id in [f"m0_{metric.lower()}_{stat.lower()}"]
                ],
                "StartTime": datetime.fromtimestamp(1_800_000_000, UTC),
                "EndTime": datetime.fromtimestamp(1_800_000_030, UTC),
            },
        )
        figures = endpoint_metrics(
            cloudwatch, endpoint_url=AWS_URL, endpoint_name="e", variant_name="primary", measurements=[shape]
        )
        stub.assert_no_pending_responses()
    with_cloudwatch_view([shape], figures)
    # Then the measurement's server figures are ModelLatency's, in ms, beside the client's
    server = shape["server"]
    assert (server["p50_ms"], server["p99_ms"], server["requests"]) == (17.5, 26.0, 600)
    assert server["source"] == "CloudWatch ModelLatency (AWS/SageMaker)"
    assert server["difference_p50_ms"] == pytest.approx(shape["p50_ms"] - 17.5, abs=1e-3)
    assert server["difference_is"] == "network plus front end"
    assert ShapeStats.model_validate({k: v for k, v in shape.items() if k in ShapeStats.model_fields}).server
    # And the report shows them side by side with the difference named
    report = render_report(result("aws-run", [shape]))
    assert "## Server-side latency (the endpoint's own view)" in report
    assert "| 17.50 |" in report and "CloudWatch ModelLatency (AWS/SageMaker)" in report
    assert "the network plus the front end" in report


def test_a_window_with_no_datapoint_yet_says_so_rather_than_showing_zero() -> None:
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    shape = measurement(20.0)
    with Stubber(cloudwatch) as stub:
        stub.add_response("get_metric_data", {"MetricDataResults": [], "Messages": []})
        figures = endpoint_metrics(
            cloudwatch, endpoint_url=AWS_URL, endpoint_name="e", variant_name="primary", measurements=[shape]
        )
    with_cloudwatch_view([shape], figures)
    assert shape["server"]["available"] is False
    assert shape["server"]["reason"] == "no ModelLatency datapoint in the measurement's period"
    assert shape["server"]["difference_p50_ms"] is None


def test_a_run_whose_server_serves_no_metrics_says_so_in_one_line() -> None:
    # Given measurements from a local container without /metrics (the DLC-like stack's MMS)
    from workflows.benchmark.server_side import beside_client, server_figures

    shapes = [measurement(20.0), measurement(25.0, batch=8)]
    for shape in shapes:
        shape["server"] = beside_client(
            shape, server_figures(None, None, source="container /metrics (Prometheus)")
        )
    # Then the report says once why, instead of a table of empty cells
    report = render_report(result("local-run", shapes))
    section = report.split("## Server-side latency (the endpoint's own view)")[1].split("##")[0]
    assert section.strip() == (
        "Not read for any measurement (container /metrics (Prometheus): the endpoint's containers serve no "
        "/metrics with a request latency histogram)."
    )
