"""The endpoint's own latency beside the client's: what the server saw, and what the path added.

A client's latency is the server's plus everything between them: the network and SageMaker's front
end (SigV4 check, routing, the hop to the instance). Reading the server's own p50/p99 for the same
window splits the two. On SageMaker the figure is CloudWatch's ModelLatency for the window
(``workflows.benchmark.cloudwatch``, published every 10 s with enhanced metrics); on the local engine
it is the container's own Prometheus histogram on ``/metrics`` (the path and port SageMaker's
detailed observability scrapes in a bring-your-own container), read at each window boundary, so
the figures cover exactly the windows the client's figures keep.
"""

from __future__ import annotations

import http.client
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

PUBLISH_PERIOD_S = 10
"""The endpoint config's MetricPublishFrequencyInSeconds (workflows.hosting.create_calls), the finest
botocore allows: with enhanced metrics it holds for ModelLatency too."""
METRICS_PATH = "/metrics"
"""Where SageMaker's detailed observability scrapes a bring-your-own container (port 8080)."""
LATENCY_HISTOGRAM = "inference_request_duration_seconds"
"""The local model server's histogram of /invocations time, from the request read to the answer."""
DIFFERENCE_LABEL = "network plus front end"

Snapshot = dict[float, float]
"""A histogram's cumulative bucket counts by upper bound (``le``), +Inf included."""
_SAGEMAKER_HOSTS = (".amazonaws.com", ".amazonaws.com.cn", ".api.aws")
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
"""Where the local SageMaker listens (plain HTTP on this machine)."""


def served_by_sagemaker(endpoint_url: str) -> bool:
    """True for SageMaker's runtime (its figures are in CloudWatch); False for the local engine's."""
    host = urlsplit(endpoint_url).hostname or ""
    return host.startswith("runtime.sagemaker.") and host.endswith(_SAGEMAKER_HOSTS)


def observability_line(mode: str) -> str:
    """The plan's line for the endpoint's own view: what is switched on, and what is read after each window."""
    if mode == "serverless":
        return (
            "endpoint's own view: a serverless variant carries no MetricsConfig (no instance to observe); "
            "server-side latency is CloudWatch's ModelLatency at its default period"
        )
    return (
        "endpoint's own view: detailed observability on (MetricsConfig.EnableDetailedObservability, "
        f"with enhanced metrics every {PUBLISH_PERIOD_S} s); after each window the server-side "
        "p50/p99 are read (CloudWatch ModelLatency on SageMaker, the container's /metrics on the local "
        f"engine) and set beside the client's, the difference being {DIFFERENCE_LABEL}"
    )


def histogram(text: str, name: str = LATENCY_HISTOGRAM) -> Snapshot | None:
    """The cumulative buckets of histogram ``name`` in a Prometheus exposition, summed over every label
    set (each container of the endpoint); None when the exposition has no such histogram."""
    from prometheus_client.parser import text_string_to_metric_families

    buckets: Snapshot = {}
    for family in text_string_to_metric_families(text):
        if family.name != name or family.type != "histogram":
            continue
        for sample in family.samples:
            if sample.name == f"{name}_bucket":
                bound = float(sample.labels["le"])
                buckets[bound] = buckets.get(bound, 0.0) + float(sample.value)
    return buckets or None


def quantile(buckets: Mapping[float, float], q: float) -> float | None:
    """The ``q`` quantile of cumulative ``buckets``, interpolated linearly within its bucket as
    Prometheus's ``histogram_quantile`` does; None without observations. A quantile in the +Inf
    bucket is the largest finite bound (the histogram cannot say more)."""
    bounds = sorted(buckets)
    if not bounds or buckets[bounds[-1]] <= 0:
        return None
    rank = q * buckets[bounds[-1]]
    lower, below = 0.0, 0.0
    for bound in bounds:
        count = buckets[bound]
        if count >= rank:
            if math.isinf(bound):
                return lower
            inside = count - below
            return lower + (bound - lower) * ((rank - below) / inside if inside > 0 else 1.0)
        lower, below = bound, count
    return lower


def difference(before: Snapshot, after: Snapshot) -> Snapshot:
    """The observations made between two snapshots of one histogram (a restarted server counts from zero)."""
    delta = {bound: after.get(bound, 0.0) - before.get(bound, 0.0) for bound in after}
    return after if any(v < 0 for v in delta.values()) else delta


def resolution(buckets: Mapping[float, float]) -> float | None:
    """The widest relative step between neighbouring finite bounds: how coarse an interpolated quantile can be."""
    finite = sorted(b for b in buckets if not math.isinf(b) and b > 0)
    steps = [upper / lower - 1 for lower, upper in zip(finite, finite[1:], strict=False)]
    return round(max(steps), 3) if steps else None


def server_figures(before: Snapshot | None, after: Snapshot | None, *, source: str) -> dict[str, Any]:
    """The server's p50/p99 (ms) and request count between two snapshots, or why there are none."""
    if before is None or after is None:
        return {
            "available": False,
            "source": source,
            "reason": "the endpoint's containers serve no /metrics with a request latency histogram",
        }
    window = difference(before, after)
    p50, p99 = quantile(window, 0.5), quantile(window, 0.99)
    total = max(window.values(), default=0.0)
    return {
        "available": p50 is not None,
        "source": source,
        "reason": "" if p50 is not None else "the server recorded no request in the window",
        "requests": int(total),
        "p50_ms": None if p50 is None else round(p50 * 1000.0, 3),
        "p99_ms": None if p99 is None else round(p99 * 1000.0, 3),
        "bucket_resolution": resolution(window),
    }


def beside_client(measurement: Mapping[str, Any], server: Mapping[str, Any]) -> dict[str, Any]:
    """The server's figures with the client's beside them and the difference, labelled."""
    figures = dict(server)
    for stat in ("p50", "p99"):
        client, own = measurement.get(f"{stat}_ms"), server.get(f"{stat}_ms")
        figures[f"client_{stat}_ms"] = client
        figures[f"difference_{stat}_ms"] = (
            None if client is None or own is None else round(float(client) - float(own), 3)
        )
    figures["difference_is"] = DIFFERENCE_LABEL
    return figures


@dataclass(frozen=True)
class MetricsProbe:
    """Reads an endpoint's latency histogram over HTTP: the local SageMaker's ``GET
    /endpoints/<name>/metrics`` (every serving container's /metrics, labelled by container)."""

    url: str
    headers: tuple[tuple[str, str], ...] = ()
    timeout_s: float = 5.0
    source: str = "container /metrics (Prometheus)"

    @classmethod
    def for_endpoint(
        cls, endpoint_url: str, endpoint_name: str, target: Mapping[str, str]
    ) -> MetricsProbe | None:
        """The probe of a local SageMaker's endpoint; None for any other URL (SageMaker's figures are
        read from CloudWatch, and an unknown front is never asked for a route only the local one has)."""
        from workflows.benchmark.client import _HEADER_PARAMETERS

        parts = urlsplit(endpoint_url)
        if parts.scheme != "http" or parts.hostname not in LOOPBACK:
            return None
        headers = tuple((_HEADER_PARAMETERS[k], v) for k, v in target.items() if k in _HEADER_PARAMETERS)
        return cls(
            f"{endpoint_url.rstrip('/')}/endpoints/{quote(endpoint_name, safe='')}{METRICS_PATH}", headers
        )

    def snapshot(self) -> Snapshot | None:
        """The histogram now; None when the endpoint answers no exposition or none with the histogram."""
        parts = urlsplit(self.url)
        connection = http.client.HTTPConnection(
            parts.hostname or "127.0.0.1", parts.port, timeout=self.timeout_s
        )
        try:
            connection.request("GET", parts.path, headers=dict(self.headers))
            response = connection.getresponse()
            text = response.read().decode("utf-8", "replace")
        except (OSError, http.client.HTTPException):
            return None
        finally:
            connection.close()
        return histogram(text) if response.status == 200 else None
