"""The routed shape: the same request through the inference router, beside direct InvokeEndpoint.

A run across Regions (``hosting.regions``) is measured both ways on the endpoint that serves: directly
(``InvokeEndpoint`` in its own Region) and through the router of the primary Region
(``InvokeInferenceRouter``), one call of each per round, the order alternating, so that the machine's
and the network's noise falls on both alike. The figures:

- the router's added latency: the routed p50 and p99 minus the direct ones, each side with its sample
  count and its distribution-free 95% interval (``workflows.benchmark.stats``), and the difference's
  interval taken conservatively (routed low minus direct high, routed high minus direct low);
- the share of the routed requests each destination served, with the reasons the router gave
  (``local-preferred``, ``only-healthy``, ``capacity-available``, ``failover``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
from botocore.exceptions import ClientError
from pydantic import Field

from workflows.benchmark.client import Outcome
from workflows.benchmark.payloads import shapes_of
from workflows.benchmark.routed_calls import JSON, ROUNDS_FLOOR, RoutedCall, RoutedPlan
from workflows.benchmark.stats import latency_summary, percentile_intervals
from workflows.models import Contract
from workflows.spec.pipeline import BenchmarkSpec

Interval = list[float | None]


class DestinationShare(Contract):
    destination: str = Field(description="The ARN of the endpoint (or component) that served.")
    region: str
    requests: int
    share: float = Field(description="Of the routed requests, 0-1.")
    reasons: dict[str, int] = Field(description="RoutingReason -> requests, as the router answered.")


class Side(Contract):
    """One way of calling: its sample count, percentiles and their 95% intervals."""

    n: int
    p50_ms: float | None
    p99_ms: float | None
    p50_ci_ms: Interval
    p99_ci_ms: Interval


class RoutedFigures(Contract):
    """What ``result.json`` says of the routed shape."""

    router: str = Field(description="The inference router's ARN.")
    shape: str = Field("", description="The (batch, sequence) shape measured both ways, e.g. b1/natural.")
    destinations: list[str] = Field(description="Its routing target's destinations, in order.")
    direct_endpoint: str = Field(description="The endpoint called directly for the comparison.")
    direct: Side
    routed: Side
    added_p50_ms: float | None = Field(description="Routed p50 minus direct p50: what the router adds.")
    added_p99_ms: float | None
    added_p50_ci_ms: Interval = Field(description="Conservative 95% interval of the difference.")
    added_p99_ci_ms: Interval
    shares: list[DestinationShare]


def _side(latencies_ms: list[float]) -> Side:
    values = np.asarray(latencies_ms, dtype=float)
    summary = latency_summary(values)
    intervals = (
        percentile_intervals(values)
        if values.size
        else {"p50_ci_ms": [None, None], "p99_ci_ms": [None, None]}
    )
    return Side(
        n=int(values.size),
        p50_ms=summary["p50_ms"],
        p99_ms=summary["p99_ms"],
        p50_ci_ms=intervals["p50_ci_ms"],
        p99_ci_ms=intervals["p99_ci_ms"],
    )


def _difference(routed: float | None, direct: float | None) -> float | None:
    return None if routed is None or direct is None else round(routed - direct, 3)


def _difference_interval(routed: Interval, direct: Interval) -> Interval:
    """[routed low - direct high, routed high - direct low]: holds whenever both intervals hold."""
    return [_difference(routed[0], direct[1]), _difference(routed[1], direct[0])]


def shares(calls: list[RoutedCall]) -> list[DestinationShare]:
    """Each destination's share of ``calls``, most served first, with the reasons given."""
    served = Counter(call.destination for call in calls)
    return [
        DestinationShare(
            destination=destination,
            region=destination.split(":")[3] if destination.count(":") >= 5 else "",
            requests=count,
            share=round(count / len(calls), 4),
            reasons=dict(Counter(c.reason for c in calls if c.destination == destination).most_common()),
        )
        for destination, count in served.most_common()
    ]


def routed_figures(
    *,
    router: str,
    destinations: list[str],
    direct_endpoint: str,
    direct_ms: list[float],
    routed: list[RoutedCall],
    shape: str = "",
) -> RoutedFigures:
    """The routed shape's figures from the direct latencies and the routed calls."""
    direct_side, routed_side = _side(direct_ms), _side([c.latency_ms for c in routed])
    return RoutedFigures(
        router=router,
        shape=shape,
        destinations=destinations,
        direct_endpoint=direct_endpoint,
        direct=direct_side,
        routed=routed_side,
        added_p50_ms=_difference(routed_side.p50_ms, direct_side.p50_ms),
        added_p99_ms=_difference(routed_side.p99_ms, direct_side.p99_ms),
        added_p50_ci_ms=_difference_interval(routed_side.p50_ci_ms, direct_side.p50_ci_ms),
        added_p99_ci_ms=_difference_interval(routed_side.p99_ci_ms, direct_side.p99_ci_ms),
        shares=shares(routed),
    )


def routed_plan(benchmark: BenchmarkSpec, *, router: str, routing_target: str, region: str) -> RoutedPlan:
    """The routed shape of a spec: its first (batch, sequence) shape, at least ``ROUNDS_FLOOR`` calls each way.

    Args:
        benchmark: the spec's benchmark section.
        router: the router's name; ``routing_target`` its target; ``region`` its Region (the run's primary).
    """
    shape = shapes_of(benchmark.batch_sizes[:1], benchmark.sequence_lengths[:1])[0]
    return RoutedPlan(
        router=router,
        routing_target=routing_target,
        region=region,
        batch_size=shape.batch_size,
        sequence_length=shape.sequence_length,
        seed=benchmark.seed,
        rounds=max(benchmark.min_requests, ROUNDS_FLOOR),
    )


def figures_of(
    samples: dict[str, Any], *, router: str, destinations: list[str], direct_endpoint: str
) -> RoutedFigures:
    """The routed shape's figures from ``measure_routed_shape``'s samples (the Lambda's, or the job's file)."""
    return routed_figures(
        router=router,
        destinations=destinations,
        direct_endpoint=direct_endpoint,
        direct_ms=[float(ms) for ms in samples["direct_ms"]],
        routed=[
            RoutedCall(float(c["latency_ms"]), str(c["destination"]), str(c["reason"]))
            for c in samples["calls"]
        ],
        shape=str(samples["shape"]),
    )


def router_call(router_runtime: Any, router: str, routing_target: str) -> Callable[[bytes], Outcome]:
    """One InvokeInferenceRouter call per body, as the warm-up loop calls an endpoint: its latency, or the
    error code the router answered (a ClientError is an error outcome, never raised)."""

    def call(body: bytes) -> Outcome:
        started = time.perf_counter()
        try:
            answer = router_runtime.invoke_inference_router(
                InferenceRouterName=router, RoutingTargetName=routing_target, Body=body, ContentType=JSON
            )
            answer["Body"].read()
        except ClientError as error:
            failed = error.response.get("Error", {})
            elapsed = (time.perf_counter() - started) * 1000
            return Outcome(
                elapsed, error=str(failed.get("Code") or "ClientError"), message=failed.get("Message")
            )
        return Outcome((time.perf_counter() - started) * 1000)

    return call
