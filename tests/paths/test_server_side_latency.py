"""The endpoint's own view on the local engine: the container's Prometheus /metrics, read at every
window boundary, beside the client's figures (light server, tiny model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.local_sagemaker import container as model_container
from tests.support.local_sagemaker import deploy, endpoint_settled, runtime, upload_artifact
from workflows.benchmark.client import Invoker
from workflows.benchmark.measure import measure
from workflows.benchmark.payloads import Shape, bodies_for
from workflows.benchmark.policy import policy_for
from workflows.benchmark.results import ShapeStats
from workflows.benchmark.server_side import LATENCY_HISTOGRAM, MetricsProbe, histogram
from workflows.local.engine import LocalEngine


@pytest.fixture
def endpoint(engine: LocalEngine, tiny_artifact: Path, tmp_path: Path) -> str:
    uri = upload_artifact(engine, tiny_artifact, "models/tiny/model.tar.gz", tmp_path)
    sagemaker = engine.client("sagemaker")
    deploy(sagemaker, "ep-metrics", {"PrimaryContainer": model_container(uri)})
    assert endpoint_settled(sagemaker, "ep-metrics")[-1]["EndpointStatus"] == "InService"
    return "ep-metrics"


def test_a_measurement_reads_the_containers_own_latency_for_its_kept_windows(
    engine: LocalEngine, endpoint: str
) -> None:
    # Given a light-server endpoint and the benchmark's client for it
    invoker = Invoker.from_client(runtime(engine), endpoint, policy=policy_for("realtime"))
    probe = MetricsProbe.for_endpoint(invoker.endpoint_url, endpoint, {})
    # When the container's exposition is read through the local SageMaker
    before = probe.snapshot()
    # Then it holds the latency histogram SageMaker would scrape from /metrics
    assert before is not None and float("inf") in before
    # When one shape is measured with the probe read at each window boundary
    shape = Shape(1, 16)
    figures = measure(
        invoker.call,
        bodies_for(shape, 0),
        shape,
        concurrency=2,
        min_duration_s=1.5,
        min_requests=30,
        max_duration_s=20,
        windows_by="time",
        probe=probe,
    )
    # Then the server's figures cover the client's kept windows: the same requests, give or take
    # those answered while each boundary's scrape made its round trip
    server = figures["server"]
    assert server["available"], server["reason"]
    assert abs(server["requests"] - figures["requests"]) <= max(4, 0.02 * figures["requests"])
    # And the server's p50 sits below the client's, the difference labelled as what lies between
    assert 0 < server["p50_ms"] <= server["p99_ms"]
    assert server["p50_ms"] < figures["p50_ms"] * 1.1
    assert server["difference_p50_ms"] == pytest.approx(figures["p50_ms"] - server["p50_ms"], abs=1e-3)
    assert server["difference_is"] == "network plus front end"
    # And the figures fit the result's contract
    assert ShapeStats.model_validate(
        {k: v for k, v in figures.items() if k in ShapeStats.model_fields}
    ).server


def test_the_exposition_merges_every_container_of_the_endpoint(engine: LocalEngine, endpoint: str) -> None:
    # Given the endpoint's merged exposition
    import urllib.request

    assert engine.sagemaker is not None
    url = f"{engine.sagemaker.url}/endpoints/{endpoint}/metrics"
    with urllib.request.urlopen(url, timeout=10) as answer:
        text = answer.read().decode()
    # Then each sample names the container it came from, and the histogram still parses as one
    assert f'{LATENCY_HISTOGRAM}_bucket{{container="' in text
    assert histogram(text) is not None
    # And an endpoint that does not exist is refused by name
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{engine.sagemaker.url}/endpoints/nope/metrics", timeout=10)
    assert "Endpoint nope" in refused.value.read().decode()
