"""Utilisation beside each measurement: the endpoint config that publishes it, the record that holds it."""

from __future__ import annotations

import re

import botocore.session
from botocore.validate import ParamValidator

from workflows.benchmark.results import ShapeStats, Utilisation
from workflows.hosting.create_calls import METRIC_PUBLISH_FREQUENCY_S, metrics_config

MODEL = botocore.session.get_session().get_service_model("sagemaker")
FIGURES = {
    "batch_size": 1,
    "sequence_length": 128,
    "requests": 300,
    "errors": 0,
    "duration_s": 30.0,
    "p50_ms": 5.0,
    "p90_ms": 6.0,
    "p99_ms": 9.0,
    "max_ms": 12.0,
    "mean_ms": 5.5,
    "std_ms": 1.0,
    "samples_per_s": 10.0,
    "requests_per_s": 10.0,
    "stable": True,
}


def test_a_realtime_config_publishes_enhanced_metrics_at_botocores_finest_frequency() -> None:
    # Given the frequencies botocore documents for MetricPublishFrequencyInSeconds
    shape = MODEL.shape_for("MetricsConfig")
    allowed = [
        int(v)
        for v in re.findall(
            r"<code>(\d+)</code>", shape.members["MetricPublishFrequencyInSeconds"].documentation
        )
    ]
    # When a real-time variant's config is built
    extra = metrics_config([{"VariantName": "primary", "InstanceType": "ml.c6i.xlarge"}])
    # Then it enables enhanced metrics at the finest of them, in botocore's own shape
    assert METRIC_PUBLISH_FREQUENCY_S == min(allowed) == 10
    assert extra == {
        "MetricsConfig": {
            "EnableEnhancedMetrics": True,
            "EnableDetailedObservability": True,
            "MetricPublishFrequencyInSeconds": 10,
        }
    }
    report = ParamValidator().validate(extra["MetricsConfig"], shape)
    assert not report.has_errors(), report.generate_report()


def test_a_serverless_config_asks_for_no_instance_metrics() -> None:
    # Given a serverless variant (it runs on no instance to report on)
    variant = {"VariantName": "primary", "ServerlessConfig": {"MemorySizeInMB": 2048, "MaxConcurrency": 5}}
    # When its config is built, Then it carries no MetricsConfig
    assert metrics_config([variant]) == {}


def test_a_result_without_utilisation_still_loads() -> None:
    # Given figures written before utilisation was recorded
    # When they are read, Then the record is simply absent
    assert ShapeStats.model_validate(FIGURES).utilisation is None


def test_ceilings_name_a_cpu_bound_window_and_a_full_gpu_memory() -> None:
    # Given windows at, under and over the stated ceilings (CPU >= 90%, GPU memory >= 95%)
    busy = Utilisation(source="cloudwatch", cpu_pct=93.0, memory_pct=40.0, gpu_pct=70.0, gpu_memory_pct=97.5)
    calm = Utilisation(source="local", cpu_pct=89.9, memory_pct=20.0)
    # When the ceilings are read
    # Then the busy window names both limits and the calm one none (no GPU: nothing said about it)
    assert busy.ceilings() == ["CPU 93% >= 90%", "GPU memory 98% >= 95%"]
    assert calm.ceilings() == []
    stats = ShapeStats.model_validate({**FIGURES, "utilisation": busy.model_dump()})
    assert stats.utilisation == busy
