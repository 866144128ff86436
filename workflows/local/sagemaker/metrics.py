"""``GET /endpoints/<name>/metrics``: the Prometheus expositions of an endpoint's serving containers, as one.

SageMaker's detailed observability scrapes each container's ``/metrics`` (port 8080 in a
bring-your-own container) and labels what it publishes by container. The local SageMaker does the
same for a client on this machine: every container serving the endpoint (every copy of the named
inference component) is scraped and each sample gets a ``container`` label, so the families stay
one family each and a reader sums them. This route is the local engine's own: a SageMaker
endpoint's figures are read from CloudWatch instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

CONTAINER_LABEL = "container"


class _Merged:
    """A collector that yields already-parsed families (prometheus_client's custom collector protocol)."""

    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterator[Metric]:
        return iter(self.families)


def merged_exposition(expositions: Iterable[tuple[str, str]]) -> bytes:
    """One exposition from ``(container id, exposition text)`` pairs, each sample labelled by its container."""
    families: dict[str, Metric] = {}
    for container, text in expositions:
        for family in text_string_to_metric_families(text):
            merged = families.setdefault(family.name, Metric(family.name, family.documentation, family.type))
            merged.samples.extend(
                sample._replace(labels={**sample.labels, CONTAINER_LABEL: container})
                for sample in family.samples
            )
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Merged(list(families.values())))
    return generate_latest(registry)
