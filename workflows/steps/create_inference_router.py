"""CreateInferenceRouter: the run's router in the primary Region, once an endpoint of another Region serves.

A run across Regions (``hosting.regions``) reaches this state when its attempt in another Region is
InService (DescribeEndpoint's phase ``route``). The router's one routing target lists the run's latest
endpoint in each Region tried so far, the primary first, ``LocalRegionFirst``: the stalled primary
endpoint (F06, left Creating for teardown) is a destination too, so the router serves from the primary
the day it gets instances and from the other Region until then. Its name is the run's
(``db-<run id>-router``), so teardown and the janitor find it by the run's prefix; a router left by an
earlier attempt of the run is replaced (its destinations were another attempt's).

A router is created ``Creating`` and deleted through ``Deleting`` (botocore's DescribeInferenceRouter
Status); it takes traffic only once InService. The step waits for the earlier router to be gone before
it creates the new one (the name is the same), and for the new one to be InService before warm-up
calls it, polling on the project's backoff within the function's time (ROUTER_WAIT_S).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from workflows.aws.clients import aws_errors, translate
from workflows.backoff import Backoff
from workflows.contracts import RouterRequest
from workflows.errors import DeployRejected, EndpointWaitTimeout
from workflows.hosting import resources
from workflows.hosting.regions import ROUTING_TARGET, create_router_request
from workflows.hosting.routed import INFERENCE_ROUTER, Regional, client_for
from workflows.hosting.router_state import RouterDestination, RouterResult
from workflows.naming import resource_prefix, router_name, tags
from workflows.settings import Settings

UNSERVABLE = {"Failed", "Deleting"}
ROUTER_POLL = Backoff(initial_s=5.0, factor=1.5, maximum_s=30.0)
ROUTER_WAIT_S = 780.0
"""How long the step waits for a router to settle: within its function's 900 s (state_machines/steps.py)."""


def settle(
    sagemaker: Any,
    name: str,
    *,
    gone: bool = False,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any] | None:
    """Poll DescribeInferenceRouter until the router is InService (or, with ``gone``, no longer exists).

    Returns:
        The InService router's description; None once a router waited on with ``gone`` is deleted.

    Raises:
        DeployRejected: the router reached Failed (its StatusReason is quoted).
        EndpointWaitTimeout: it had not settled within ROUTER_WAIT_S.
    """
    started, attempt = clock(), 0
    while True:
        try:
            described: dict[str, Any] = sagemaker.describe_inference_router(InferenceRouterName=name)
        except ClientError as error:
            if gone and error.response.get("Error", {}).get("Code") == "ResourceNotFound":
                return None
            raise translate(error, f"describe inference router {name}") from error
        status = described.get("Status")
        if status == "InService" and not gone:
            return described
        if status == "Failed" and not gone:
            reason = described.get("StatusReason") or "no StatusReason given"
            raise DeployRejected(f"inference router {name} reached Failed: {reason}")
        attempt += 1
        delay = ROUTER_POLL.delay_s(attempt)
        if clock() - started + delay > ROUTER_WAIT_S:
            waiting = "to be deleted" if gone else "to reach InService"
            raise EndpointWaitTimeout(
                f"inference router {name} is still {status} after {clock() - started:.0f} s, waiting {waiting}."
            )
        sleep(delay)


def _latest(sagemaker: Any, region: str, prefix: str) -> RouterDestination | None:
    """The run's most recent endpoint of one Region that is neither Failed nor being deleted."""
    found = [
        item
        for item in resources.find(sagemaker, resources.ENDPOINT, prefix).values()
        if item.get("EndpointStatus") not in UNSERVABLE
    ]
    if not found:
        return None
    item = max(found, key=lambda listed: listed["CreationTime"])
    return RouterDestination(
        region=region,
        endpoint_name=item["EndpointName"],
        arn=item["EndpointArn"],
        status=item["EndpointStatus"],
    )


def destinations(request: RouterRequest, *, sagemaker: Any, regional: Regional) -> list[RouterDestination]:
    """The run's latest endpoint in each Region of ``hosting.regions`` up to the attempt's, primary first."""
    regions = list(getattr(request.spec.hosting, "regions", None) or [])[: request.attempt.region_index + 1]
    prefix = f"{resource_prefix(request.run_id)}-"
    found = [
        _latest(client_for(sagemaker, None if index == 0 else region, regional), region, prefix)
        for index, region in enumerate(regions)
    ]
    return [destination for destination in found if destination is not None]


def create_router(
    request: RouterRequest, *, sagemaker: Any, regional: Regional, settings: Settings
) -> RouterResult:
    """Create the run's router in the primary Region over its endpoints in every Region tried.

    Args:
        request: the run, its InService deploy in another Region, and the attempt (how far it went).
        sagemaker: the primary Region's SageMaker client (the router's home).
        regional: another Region's SageMaker client, by Region name.
        settings: the primary Region.

    Raises:
        DeployRejected: SageMaker refused CreateInferenceRouter, or the router reached Failed.
        EndpointWaitTimeout: the earlier router was not gone, or the new one not InService, in time.
    """
    name = router_name(request.run_id)
    listed = resources.find(sagemaker, INFERENCE_ROUTER, name)
    if name in listed:
        with aws_errors(f"delete the run's earlier router {name}"):
            sagemaker.delete_inference_router(InferenceRouterName=name)
        settle(sagemaker, name, gone=True)
    served = destinations(request, sagemaker=sagemaker, regional=regional)
    call = create_router_request(
        name,
        destinations=[d.arn for d in served],
        tags=[{"Key": str(t["Key"]), "Value": str(t["Value"])} for t in tags(request.run_id, request.spec)],
    )
    with aws_errors(f"create inference router {name}"):
        arn = sagemaker.create_inference_router(**call)["InferenceRouterArn"]
    settle(sagemaker, name)
    return RouterResult(
        name=name, arn=arn, region=settings.region, routing_target=ROUTING_TARGET, destinations=served
    )
