"""Inference routers of the local SageMaker: Create/Describe/Delete/ListInferenceRouters and InvokeInferenceRouter.

A router lives in one Region and sends each request of a routing target to one of its destinations
(endpoints in any local Region), ``LocalRegionFirst``: a destination of the router's own Region while
it is InService and under its capacity, otherwise a destination of another Region that can take the
request. The answer names the destination that served and why, with the reasons of botocore's
``InvokeInferenceRouterOutput.RoutingReason``: ``local-preferred``, ``only-healthy`` (exactly one
other-Region destination could take it), ``capacity-available`` (two or more could), ``failover`` (the
chosen destination failed before the model answered, and the router retried once on another).

Capacity is the endpoint config's ``CrossRegionTrafficConfig``: ``MaxInvocationsPerSecondPerInstance``
times its InService instances per second, of which other Regions' routers may use
``MaxCrossRegionPercentPerEndpoint`` (rounded up); direct InvokeEndpoint calls are not counted, as on
AWS. An endpoint without that config has no cap. The router has nothing to provision locally: it is
InService when CreateInferenceRouter answers.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from workflows import clock
from workflows.local.sagemaker.api import ApiError, epoch, valid_name
from workflows.local.sagemaker.backend import Invocation, LocalSageMaker
from workflows.local.sagemaker.state import Endpoint

LOCAL_PREFERRED = "local-preferred"
ONLY_HEALTHY = "only-healthy"
CAPACITY_AVAILABLE = "capacity-available"
FAILOVER = "failover"
WINDOW_S = 1.0
# Errors a router retries once on another destination: the destination could not take the request
# before the model produced an answer (InvokeInferenceRouter's documentation: throttling and the like).
RETRIED = {"ThrottlingException", "ServiceUnavailable", "ValidationError", "ModelNotReadyException"}


@dataclass
class Router:
    name: str
    arn: str
    region: str
    targets: list[dict[str, Any]]
    created: datetime
    modified: datetime


@dataclass
class Routed:
    """What InvokeInferenceRouter answers: the destination's invocation, which destination, and why."""

    invocation: Invocation
    destination: str
    reason: str


@dataclass
class _Window:
    """Routed requests of the last second to one destination."""

    times: deque[float] = field(default_factory=deque)

    def count(self, now: float) -> int:
        while self.times and now - self.times[0] >= WINDOW_S:
            self.times.popleft()
        return len(self.times)


def destination_parts(arn: str) -> tuple[str, str]:
    """(Region, endpoint name) of an endpoint destination's ARN."""
    parts = arn.split(":", 5)
    return parts[3], parts[5].split("/", 1)[1]


def capacity(config: dict[str, Any] | None, in_service: int, *, cross_region: bool) -> int | None:
    """Routed requests per second the endpoint takes; None without ``CrossRegionTrafficConfig`` (no cap)."""
    cap = (config or {}).get("CrossRegionTrafficConfig")
    if not cap:
        return None
    full = cap["MaxInvocationsPerSecondPerInstance"] * in_service
    return math.ceil(full * cap["MaxCrossRegionPercentPerEndpoint"] / 100) if cross_region else full


class LocalRouters:
    """Every local Region's routers, over the Regions' backends (``region_backend`` builds one on first use)."""

    def __init__(self, region_backend: Callable[[str], LocalSageMaker]) -> None:
        self._backend = region_backend
        self.lock = threading.RLock()
        self.routers: dict[tuple[str, str], Router] = {}
        self._windows: dict[str, _Window] = {}

    # --- control plane (sagemaker) ------------------------------------------------------------

    def create_inference_router(self, region: str, body: dict[str, Any]) -> dict[str, Any]:
        name = valid_name(body, "InferenceRouterName")
        backend = self._backend(region)
        arn = backend.arn("inference-router", name)
        now = clock.now()
        with self.lock:
            if (region, name) in self.routers:
                raise ApiError(
                    "ResourceAlreadyExists", f'Cannot create already existing inference router "{arn}".'
                )
            self.routers[region, name] = Router(name, arn, region, list(body["RoutingTargets"]), now, now)
        with backend.lock:
            backend.tags[arn] = list(body.get("Tags") or [])
        return {"InferenceRouterArn": arn}

    def describe_inference_router(self, region: str, body: dict[str, Any]) -> dict[str, Any]:
        router = self._router(region, body)
        targets = [
            {
                **target,
                "Destinations": [
                    {"ResourceArn": d["ResourceArn"], "RoutingStatus": self._routing_status(d["ResourceArn"])}
                    for d in target["Destinations"]
                ],
            }
            for target in router.targets
        ]
        return {
            "InferenceRouterName": router.name,
            "InferenceRouterArn": router.arn,
            "RoutingTargets": targets,
            "Status": "InService",
            "CreationTime": epoch(router.created),
            "LastModifiedTime": epoch(router.modified),
        }

    def delete_inference_router(self, region: str, body: dict[str, Any]) -> dict[str, Any]:
        router = self._router(region, body)
        with self.lock:
            self.routers.pop((region, router.name), None)
        backend = self._backend(region)
        with backend.lock:
            backend.tags.pop(router.arn, None)
        return {}

    def list_inference_routers(self, region: str, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            mine = sorted(
                (r for (home, _), r in self.routers.items() if home == region), key=lambda r: r.name
            )
        return {
            "InferenceRouters": [
                {
                    "InferenceRouterName": r.name,
                    "InferenceRouterArn": r.arn,
                    "CreationTime": epoch(r.created),
                    "LastModifiedTime": epoch(r.modified),
                }
                for r in mine
            ]
        }

    def names(self, region: str) -> list[str]:
        with self.lock:
            return sorted(name for home, name in self.routers if home == region)

    def _router(self, region: str, body: dict[str, Any]) -> Router:
        name = valid_name(body, "InferenceRouterName")
        with self.lock:
            router = self.routers.get((region, name))
        if router is None:
            arn = self._backend(region).arn("inference-router", name)
            raise ApiError("ResourceNotFound", f'Could not find inference router "{arn}".')
        return router

    # --- routing ------------------------------------------------------------------------------

    def _endpoint(self, arn: str) -> tuple[LocalSageMaker, Endpoint | None]:
        region, name = destination_parts(arn)
        backend = self._backend(region)
        with backend.lock:
            found = next((e for e in backend.endpoints.values() if e.name.lower() == name.lower()), None)
        return backend, found

    def _routing_status(self, arn: str) -> str:
        _, endpoint = self._endpoint(arn)
        if endpoint is None or endpoint.status == "Failed":
            return "Unroutable"
        return "Routable" if endpoint.status == "InService" else "Unknown"

    def _can_take(self, router: Router, arn: str, now: float) -> bool:
        """InService and under its capacity for this router (other Regions' routers get their share)."""
        backend, endpoint = self._endpoint(arn)
        if endpoint is None or endpoint.status != "InService":
            return False
        with backend.lock:
            config = backend.configs.get(endpoint.config_name)
            in_service = len(endpoint.instances) or 1
        cap = capacity(config, in_service, cross_region=destination_parts(arn)[0] != router.region)
        if cap is None:
            return True
        with self.lock:
            return self._windows.setdefault(arn, _Window()).count(now) < cap

    def record(self, arn: str, at: float) -> None:
        """One routed request sent to ``arn`` at ``at`` (``time.monotonic()``), counted against its capacity."""
        with self.lock:
            self._windows.setdefault(arn, _Window()).times.append(at)

    def choose(self, router: Router, destinations: list[str]) -> list[tuple[str, str]]:
        """The destinations to try in order, each with its reason: local ones that can take the request
        first, then the other Regions' (``LocalRegionFirst``); none can, the first is tried anyway."""
        now = time.monotonic()
        able = [arn for arn in destinations if self._can_take(router, arn, now)]
        local = [arn for arn in able if destination_parts(arn)[0] == router.region]
        remote = [arn for arn in able if destination_parts(arn)[0] != router.region]
        remote_reason = ONLY_HEALTHY if len(remote) == 1 else CAPACITY_AVAILABLE
        order = [(arn, LOCAL_PREFERRED) for arn in local] + [(arn, remote_reason) for arn in remote]
        return order or [(destinations[0], FAILOVER)]

    def invoke_inference_router(
        self, region: str, name: str, target_name: str | None, body: bytes, headers: dict[str, str]
    ) -> Routed:
        """Raises ApiError as InvokeInferenceRouter does (ValidationException, ModelError, ...)."""
        router = self._router(region, {"InferenceRouterName": name})
        target = next((t for t in router.targets if t["Name"] == target_name), None)
        if target is None:
            raise ApiError(
                "ValidationException",
                f"Routing target {target_name} does not exist in inference router {router.arn}.",
            )
        order = self.choose(router, [d["ResourceArn"] for d in target["Destinations"]])
        # One retry on another destination, as the router does for an error before the model answered.
        first_error: ApiError | None = None
        for attempt, (arn, reason) in enumerate(order[:2]):
            backend, endpoint = self._endpoint(arn)
            self.record(arn, time.monotonic())
            try:
                name = endpoint.name if endpoint else destination_parts(arn)[1]
                invocation = backend.invoke_endpoint(name, body, headers)
            except ApiError as error:
                if error.code not in RETRIED or attempt == 1 or len(order) == 1:
                    raise _router_error(error) from None
                first_error = error
                continue
            return Routed(invocation, arn, FAILOVER if first_error else reason)
        raise _router_error(
            first_error or ApiError("ServiceUnavailableException", "No destination answered.", 503)
        )


def _router_error(error: ApiError) -> ApiError:
    """A destination's error as the router's runtime names it (its service's error shapes)."""
    if error.code == "ModelError":
        return error
    if error.code == "ThrottlingException":
        return ApiError("ThrottlingException", error.message or "Rate exceeded", 429)
    return ApiError(
        "ServiceUnavailableException",
        f"No destination of the routing target could take the request: {error.message}",
        503,
    )
