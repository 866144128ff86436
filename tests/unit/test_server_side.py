"""The server's own latency from a Prometheus histogram: parsing, the window between two reads, quantiles."""

from __future__ import annotations

import math

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from workflows.benchmark.server_side import (
    LATENCY_HISTOGRAM,
    beside_client,
    difference,
    histogram,
    quantile,
    server_figures,
)
from workflows.local.sagemaker.light_server import LATENCY_BUCKETS, latency_histogram
from workflows.local.sagemaker.metrics import merged_exposition


def exposition(latencies_s: list[float]) -> str:
    registry = CollectorRegistry()
    recorded = latency_histogram(registry)
    for value in latencies_s:
        recorded.observe(value)
    return generate_latest(registry).decode()


def test_quantiles_interpolate_within_a_bucket_as_histogram_quantile_does() -> None:
    # Given 10 observations in (0, 1] and 10 in (1, 2]
    buckets = {1.0: 10.0, 2.0: 20.0, math.inf: 20.0}
    # Then p50 is the first bucket's upper bound and p75 halfway through the second
    assert quantile(buckets, 0.5) == 1.0
    assert quantile(buckets, 0.75) == 1.5
    # And a quantile in the +Inf bucket is the largest finite bound; no observations, no quantile
    assert quantile({1.0: 1.0, math.inf: 10.0}, 0.99) == 1.0
    assert quantile({1.0: 0.0, math.inf: 0.0}, 0.5) is None


def test_the_light_servers_buckets_hold_p50_and_p99_within_ten_percent() -> None:
    # Given latencies spread from 2 ms to 40 ms, observed by the light server's histogram
    values = [0.002 + 0.038 * i / 999 for i in range(1000)]
    buckets = histogram(exposition(values))
    assert buckets is not None
    # Then the interpolated quantiles are within a bucket's 10% of the exact ones
    exact = sorted(values)
    assert quantile(buckets, 0.5) == pytest.approx(exact[499], rel=0.1)
    assert quantile(buckets, 0.99) == pytest.approx(exact[989], rel=0.1)
    assert LATENCY_BUCKETS[0] == 0.0001 and LATENCY_BUCKETS[-1] > 60


def test_a_window_is_the_difference_of_two_reads_and_names_the_client_difference() -> None:
    # Given a read before and after a window in which 100 requests took 5 ms each
    before = histogram(exposition([0.050] * 7))
    after = histogram(exposition([0.050] * 7 + [0.005] * 100))
    # When the server's figures are taken between them
    figures = server_figures(before, after, source="test")
    # Then only the window's requests count, and its p50 is about 5 ms
    assert figures["requests"] == 100
    assert figures["p50_ms"] == pytest.approx(5.0, rel=0.1)
    # And beside a client p50 of 7 ms the difference is named for what it is
    beside = beside_client({"p50_ms": 7.0, "p99_ms": 9.0}, figures)
    assert beside["difference_p50_ms"] == pytest.approx(7.0 - figures["p50_ms"])
    assert beside["difference_is"] == "network plus front end"


def test_a_restarted_server_counts_from_zero_and_a_missing_histogram_says_so() -> None:
    assert difference({1.0: 50.0, math.inf: 50.0}, {1.0: 3.0, math.inf: 3.0}) == {1.0: 3.0, math.inf: 3.0}
    figures = server_figures(None, None, source="test")
    assert (figures["available"], figures["reason"]) == (
        False,
        "the endpoint's containers serve no /metrics with a request latency histogram",
    )
    assert histogram("# no metrics here\n") is None


def test_merged_expositions_label_each_container_and_sum_as_one_histogram() -> None:
    # Given two containers' expositions
    text = merged_exposition(
        [("i-1/primary", exposition([0.01] * 3)), ("i-2/primary", exposition([0.02] * 5))]
    )
    # Then one histogram family holds both, labelled by container, and reads as their sum
    assert text.decode().count(f"# TYPE {LATENCY_HISTOGRAM} histogram") == 1
    assert 'container="i-2/primary"' in text.decode()
    merged = histogram(text.decode())
    assert merged is not None and merged[math.inf] == 8


@pytest.mark.parametrize(
    ("url", "probed"),
    [
        ("http://127.0.0.1:50123", True),
        ("https://runtime.sagemaker.us-east-1.amazonaws.com", False),
        # A VPC interface endpoint of the runtime: SageMaker's too, never asked for the local route
        ("https://vpce-0abc.runtime.sagemaker.us-east-1.vpce.amazonaws.com", False),
        ("http://10.0.0.5:8080", False),
    ],
)
def test_only_the_local_sagemaker_is_probed(url: str, probed: bool) -> None:
    from workflows.benchmark.server_side import MetricsProbe

    probe = MetricsProbe.for_endpoint(url, "e", {"InferenceComponentName": "ic"})
    assert (probe is not None) is probed
    if probe is not None:
        assert probe.url == f"{url}/endpoints/e/metrics"
        assert probe.headers == (("X-Amzn-SageMaker-Inference-Component", "ic"),)
