"""The routed shape's calls: one direct and one routed call per round, the order alternating.

Shipped to the benchmark processing job with the engine (``workflows.benchmark.JOB_MODULES``): the
standard library and the engine's payloads only. The Lambda runner (RunBenchmark) and the job measure with
the same ``measure_routed_shape`` from the same ``RoutedPlan``, and the figures made of the samples are
``workflows.benchmark.routed``'s, for either runner.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from workflows.benchmark.payloads import SequenceLength, Shape, payload


@dataclass(frozen=True)
class RoutedCall:
    """One routed request: its latency, and which destination served it and why (the response's headers)."""

    latency_ms: float
    destination: str
    reason: str


def measure_routed(
    direct: Callable[[], object], routed: Callable[[], tuple[str, str]], rounds: int
) -> tuple[list[float], list[RoutedCall]]:
    """``rounds`` calls each way, one of each per round, the order alternating round by round.

    Args:
        direct: makes one direct call (its answer is not read).
        routed: makes one routed call; returns the serving destination and the routing reason.
        rounds: calls each way.
    """
    direct_ms: list[float] = []
    calls: list[RoutedCall] = []
    for index in range(rounds):
        for way in ("direct", "routed") if index % 2 == 0 else ("routed", "direct"):
            started = time.perf_counter()
            if way == "direct":
                direct()
                direct_ms.append((time.perf_counter() - started) * 1000)
            else:
                destination, reason = routed()
                calls.append(RoutedCall((time.perf_counter() - started) * 1000, destination, reason))
    return direct_ms, calls


ROUNDS_FLOOR = 30
"""Calls each way at least: a p99 from fewer is the slowest call, not a percentile."""
JSON = "application/json"


@dataclass(frozen=True)
class RoutedPlan:
    """What measuring the routed shape needs, as the Lambda runner and the processing job's config carry it."""

    router: str
    routing_target: str
    region: str
    batch_size: int
    sequence_length: SequenceLength
    seed: int
    rounds: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RoutedPlan:
        return cls(**data)


def measure_routed_shape(
    plan: RoutedPlan, *, runtime: Any, router_runtime: Any, endpoint_name: str, target: dict[str, str]
) -> dict[str, Any]:
    """The plan's shape through the router and directly to the serving endpoint, alternating; the samples.

    Both ways go through boto3 (InvokeEndpoint on ``runtime``, the endpoint's Region's client, and
    InvokeInferenceRouter on ``router_runtime``, the router's Region's), so the client's own overhead is the
    same on each side and the difference is the router's.

    Returns:
        ``shape`` (its label), ``direct_ms`` and ``calls`` (each routed call's latency, destination and
        reason), which ``workflows.benchmark.routed.figures_of`` turns into the figures.
    """
    shape = Shape(plan.batch_size, plan.sequence_length)
    body = payload(shape, seed=plan.seed)

    def direct() -> object:
        answer = runtime.invoke_endpoint(EndpointName=endpoint_name, Body=body, ContentType=JSON, **target)
        return answer["Body"].read()

    def through_router() -> tuple[str, str]:
        answer = router_runtime.invoke_inference_router(
            InferenceRouterName=plan.router,
            RoutingTargetName=plan.routing_target,
            Body=body,
            ContentType=JSON,
        )
        answer["Body"].read()
        return str(answer["InvokedRoutedResourceArn"]), str(answer["RoutingReason"])

    direct_ms, calls = measure_routed(direct, through_router, plan.rounds)
    return {"shape": shape.label, "direct_ms": direct_ms, "calls": [asdict(call) for call in calls]}
