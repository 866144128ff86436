"""The endpoint's own view of each measurement: CloudWatch ModelLatency and OverheadLatency.

SageMaker publishes both in MICROseconds (``AWS/SageMaker``, one-minute periods, a minute or
more late); they are converted to ms to sit beside the client's latency. A measurement shorter
than the minutes it touches shares those minutes with its neighbours, which the result says.
An endpoint not served by SageMaker (the local engine) has no such metrics: the result says
"not available locally" instead of showing anything.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_cloudwatch.type_defs import DimensionTypeDef, MetricDataQueryTypeDef

NAMESPACE = "AWS/SageMaker"
METRICS = ("ModelLatency", "OverheadLatency")
STATS = {"p50": "p50_ms", "p99": "p99_ms", "Average": "mean_ms"}
PERIOD_S = 60
_SAGEMAKER_HOSTS = (".amazonaws.com", ".amazonaws.com.cn", ".api.aws")


def served_by_sagemaker(endpoint_url: str) -> bool:
    host = urlsplit(endpoint_url).hostname or ""
    return host.startswith("runtime.sagemaker.") and host.endswith(_SAGEMAKER_HOSTS)


def not_available(endpoint_url: str) -> dict[str, Any]:
    return {
        "available": False,
        "reason": (
            f"not available locally: the endpoint was served at {endpoint_url}, not by SageMaker, so "
            "CloudWatch holds no ModelLatency/OverheadLatency for it"
        ),
        "shapes": [],
    }


def _minute_range(started_at: float, ended_at: float) -> tuple[int, int]:
    start = int(math.floor(started_at / PERIOD_S) * PERIOD_S)
    end = int(math.ceil(ended_at / PERIOD_S) * PERIOD_S)
    return start, max(end, start + PERIOD_S)


def _queries(index: int, dimensions: list[DimensionTypeDef], span_s: int) -> list[MetricDataQueryTypeDef]:
    queries: list[MetricDataQueryTypeDef] = []
    for metric in (*METRICS, "Invocations"):
        stats = ("SampleCount",) if metric == "Invocations" else tuple(STATS)
        for stat in stats:
            queries.append(
                {
                    "Id": f"m{index}_{metric.lower()}_{stat.lower()}",
                    "MetricStat": {
                        "Metric": {"Namespace": NAMESPACE, "MetricName": metric, "Dimensions": dimensions},
                        "Period": span_s,
                        "Stat": stat,
                    },
                    "ReturnData": True,
                }
            )
    return queries


def endpoint_metrics(
    cloudwatch: CloudWatchClient | None,
    *,
    endpoint_url: str,
    endpoint_name: str,
    variant_name: str,
    measurements: list[dict[str, Any]],
    inference_component: str | None = None,
) -> dict[str, Any]:
    """CloudWatch figures for each measurement's time range, beside the client's figures."""
    if not served_by_sagemaker(endpoint_url):
        return not_available(endpoint_url)
    if cloudwatch is None:
        return {
            "available": False,
            "reason": "no CloudWatch client was given to read the figures",
            "shapes": [],
        }
    dimensions: list[DimensionTypeDef] = (
        [{"Name": "InferenceComponentName", "Value": inference_component}]
        if inference_component
        else [
            {"Name": "EndpointName", "Value": endpoint_name},
            {"Name": "VariantName", "Value": variant_name},
        ]
    )
    ranges = [_minute_range(m["started_at"], m["ended_at"]) for m in measurements]
    shapes = []
    for index, (measurement, (start, end)) in enumerate(zip(measurements, ranges, strict=True)):
        response = cloudwatch.get_metric_data(
            MetricDataQueries=_queries(index, dimensions, end - start),
            StartTime=datetime.fromtimestamp(start, UTC),
            EndTime=datetime.fromtimestamp(end, UTC),
        )
        values = {
            r["Id"]: next(iter(r.get("Values") or []), None) for r in response.get("MetricDataResults", [])
        }
        figures: dict[str, Any] = {
            "batch_size": measurement["batch_size"],
            "sequence_length": measurement["sequence_length"],
            "concurrency": measurement["concurrency"],
            "period": [start, end],
            "shares_minutes_with_other_shapes": any(
                i != index and s < end and e > start for i, (s, e) in enumerate(ranges)
            ),
            "client_requests": measurement["requests"],
        }
        invocations = values.get(f"m{index}_invocations_samplecount")
        figures["cloudwatch_invocations"] = None if invocations is None else int(invocations)
        for metric in METRICS:
            for stat, key in STATS.items():
                value = values.get(f"m{index}_{metric.lower()}_{stat.lower()}")
                # CloudWatch reports these two in microseconds.
                figures[f"{metric}_{key}"] = None if value is None else round(value / 1000.0, 3)
        shapes.append(figures)
    published = any(s["cloudwatch_invocations"] for s in shapes)
    return {
        "available": True,
        "reason": "" if published else "no datapoints yet: CloudWatch publishes a minute or more late",
        "unit_note": "ModelLatency/OverheadLatency are published in microseconds; shown here in ms",
        "shapes": shapes,
    }
