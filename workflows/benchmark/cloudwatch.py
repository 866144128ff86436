"""The endpoint's own view of each measurement: CloudWatch ModelLatency and OverheadLatency.

SageMaker publishes both in MICROseconds (``AWS/SageMaker``); they are converted to ms to sit
beside the client's latency. With enhanced metrics on, the endpoint config's 10 s
MetricPublishFrequencyInSeconds applies to these invocation metrics too, so each measurement is
read over its own 10 s-aligned period (CloudWatch's high-resolution periods: 10, 20, 30, 60 s, then
whole minutes); a period it shares with a neighbouring measurement is flagged. ModelLatency's p50
and p99 become the measurement's ``server`` figures, beside the client's (the difference is the
network plus SageMaker's front end). An endpoint not served by SageMaker (the local engine) has no
such metrics: its server figures come from the container's /metrics instead
(``workflows.benchmark.server_side``) and this section says "not available locally".
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from workflows.benchmark.server_side import PUBLISH_PERIOD_S, beside_client, served_by_sagemaker

if TYPE_CHECKING:
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_cloudwatch.type_defs import DimensionTypeDef, MetricDataQueryTypeDef

NAMESPACE = "AWS/SageMaker"
METRICS = ("ModelLatency", "OverheadLatency")
STATS = {"p50": "p50_ms", "p99": "p99_ms", "Average": "mean_ms"}
PERIOD_S = PUBLISH_PERIOD_S
_HIGH_RESOLUTION_PERIODS_S = (10, 20, 30, 60)
SERVER_SOURCE = "CloudWatch ModelLatency (AWS/SageMaker)"
UTILISATION_NAMESPACE = "/aws/sagemaker/Endpoints"
UTILISATION_METRICS = {
    "CPUUtilization": "cpu_pct",
    "MemoryUtilization": "memory_pct",
    "GPUUtilization": "gpu_pct",
    "GPUMemoryUtilization": "gpu_memory_pct",
}
"""The instance metrics SageMaker publishes per variant. CPU and GPU figures are summed over cores and
GPUs (four vCPUs read 0-400%): they are divided by the instance's count to read 0-100%."""
UTILISATION_PERIOD_S = PUBLISH_PERIOD_S
"""The endpoint config publishes them every 10 s (MetricsConfig); each measurement averages its own."""


def not_available(endpoint_url: str) -> dict[str, Any]:
    return {
        "available": False,
        "reason": (
            f"not available locally: the endpoint was served at {endpoint_url}, not by SageMaker, so "
            "CloudWatch holds no ModelLatency/OverheadLatency for it"
        ),
        "shapes": [],
    }


def period_range(started_at: float, ended_at: float) -> tuple[int, int]:
    """The one GetMetricData period holding ``started_at``..``ended_at``: 10 s-aligned, and a length
    CloudWatch takes for a high-resolution metric (10, 20, 30 or 60 s, else a multiple of 60)."""
    start = int(math.floor(started_at / PERIOD_S) * PERIOD_S)
    needed = max(int(math.ceil(ended_at)) - start, PERIOD_S)
    span = next((p for p in _HIGH_RESOLUTION_PERIODS_S if p >= needed), math.ceil(needed / 60) * 60)
    return start, start + span


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


def _utilisation_window(started_at: float, ended_at: float) -> tuple[int, int]:
    step = UTILISATION_PERIOD_S
    start = int(math.floor(started_at / step) * step)
    return start, max(int(math.ceil(ended_at / step) * step), start + step)


def _divisors(instance_type: str | None) -> dict[str, int] | None:
    """What each summed metric is divided by on ``instance_type``; None where no instance reports."""
    from workflows.preflight.instances import instance

    row = instance(instance_type) if instance_type else None
    if row is None:
        return None
    gpus = max(1, row.accelerators) if row.accelerator_kind == "gpu" else 1
    return {"cpu_pct": max(1, row.vcpus), "memory_pct": 1, "gpu_pct": gpus, "gpu_memory_pct": gpus}


def utilisation(
    cloudwatch: CloudWatchClient,
    *,
    endpoint_name: str,
    variant_name: str,
    instance_type: str | None,
    measurement: dict[str, Any],
) -> dict[str, Any] | None:
    """The instance's CPU, memory, GPU and GPU memory over one measurement's own window, as a
    ``Utilisation`` (source cloudwatch); None where the instance type is unknown (serverless) or no
    datapoint was published in the window."""
    from workflows.benchmark.results import Utilisation

    divisors = _divisors(instance_type)
    if divisors is None:
        return None
    start, end = _utilisation_window(measurement["started_at"], measurement["ended_at"])
    dimensions: list[DimensionTypeDef] = [
        {"Name": "EndpointName", "Value": endpoint_name},
        {"Name": "VariantName", "Value": variant_name},
    ]
    queries: list[MetricDataQueryTypeDef] = [
        {
            "Id": f"u_{key}",
            "MetricStat": {
                "Metric": {
                    "Namespace": UTILISATION_NAMESPACE,
                    "MetricName": metric,
                    "Dimensions": dimensions,
                },
                "Period": UTILISATION_PERIOD_S,
                "Stat": "Average",
            },
            "ReturnData": True,
        }
        for metric, key in UTILISATION_METRICS.items()
    ]
    response = cloudwatch.get_metric_data(
        MetricDataQueries=queries,
        StartTime=datetime.fromtimestamp(start, UTC),
        EndTime=datetime.fromtimestamp(end, UTC),
    )
    figures: dict[str, float | None] = {}
    for result in response.get("MetricDataResults", []):
        values = list(result.get("Values") or [])
        key = result["Id"].removeprefix("u_")
        figures[key] = round(sum(values) / len(values) / divisors[key], 1) if values else None
    if all(v is None for v in figures.values()):
        return None
    return Utilisation(source="cloudwatch", started_at=start, ended_at=end, **figures).model_dump(mode="json")


def server_latency(shape: dict[str, Any]) -> dict[str, Any]:
    """A measurement's ``server`` figures from CloudWatch's ModelLatency over its period."""
    p50, p99 = shape.get("ModelLatency_p50_ms"), shape.get("ModelLatency_p99_ms")
    return {
        "available": p50 is not None,
        "source": SERVER_SOURCE,
        "reason": "" if p50 is not None else "no ModelLatency datapoint in the measurement's period",
        "requests": shape.get("cloudwatch_invocations"),
        "p50_ms": p50,
        "p99_ms": p99,
    }


def with_cloudwatch_view(measurements: list[dict[str, Any]], figures: dict[str, Any]) -> None:
    """Each measurement that has no utilisation or server figures of its own gets CloudWatch's, read
    for its window (the local engine's come from its own host and containers)."""
    for measurement, shape in zip(measurements, figures.get("shapes") or [], strict=False):
        if not measurement.get("utilisation") and shape.get("utilisation"):
            measurement["utilisation"] = shape["utilisation"]
        if not measurement.get("server"):
            measurement["server"] = beside_client(measurement, server_latency(shape))


def endpoint_metrics(
    cloudwatch: CloudWatchClient | None,
    *,
    endpoint_url: str,
    endpoint_name: str,
    variant_name: str,
    measurements: list[dict[str, Any]],
    inference_component: str | None = None,
    instance_type: str | None = None,
) -> dict[str, Any]:
    """CloudWatch figures for each measurement's time range, beside the client's figures: the
    endpoint's latencies, and the instance's utilisation over the measurement's own window
    (``instance_type`` given: an instance-backed endpoint, whose summed CPU and GPU figures are read
    per core and per GPU)."""
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
    ranges = [period_range(m["started_at"], m["ended_at"]) for m in measurements]
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
        figures["utilisation"] = utilisation(
            cloudwatch,
            endpoint_name=endpoint_name,
            variant_name=variant_name,
            instance_type=instance_type,
            measurement=measurement,
        )
        shapes.append(figures)
    published = any(s["cloudwatch_invocations"] for s in shapes)
    return {
        "available": True,
        "reason": "" if published else "no datapoints yet: CloudWatch publishes seconds to a minute late",
        "unit_note": "ModelLatency/OverheadLatency are published in microseconds; shown here in ms",
        "shapes": shapes,
    }
