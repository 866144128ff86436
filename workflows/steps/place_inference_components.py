"""PlaceInferenceComponents: on an InService endpoint, create the run's inference components and
follow them until every one has its copies (F09); scale to zero then registers their scaling.

Polled like the endpoint (Place -> Choice -> Wait(SecondsPath) -> Place), within the same wait
budget: a component that exists is described, never created twice.
"""

from __future__ import annotations

from typing import Any

from workflows import clock
from workflows.contracts import DescribeRequest, EndpointStatus
from workflows.hosting.base import AwsClients
from workflows.hosting.modes import strategy_for
from workflows.hosting.polling import next_wait, poll_number, refuse_past_budget

IN_SERVICE = "InService"


def place_inference_components(
    request: DescribeRequest,
    *,
    sagemaker: Any,
    autoscaling: Any = None,
    cloudwatch: Any = None,
) -> EndpointStatus:
    """Create what is missing, report each component's status and copies.

    Raises:
        InferenceComponentFailed: a component Failed or is short of copies (F09).
        EndpointWaitTimeout: the components do not serve within ``wait.timeout_min``.
    """
    clients = AwsClients(sagemaker=sagemaker, autoscaling=autoscaling, cloudwatch=cloudwatch)
    progress = strategy_for(request.deploy.mode).advance(request, clients=clients)
    polls = poll_number(request)
    waited = (clock.now() - request.deploy.created_at).total_seconds()
    if not progress.ready:
        refuse_past_budget(request, waited, f"InService, still placing {progress.phase}")
    previous = request.poll
    return EndpointStatus(
        status=IN_SERVICE if progress.ready else "Creating",
        endpoint_status=IN_SERVICE,
        phase=progress.phase,
        components=progress.components,
        has_variants=previous.has_variants if previous else True,
        instance_assigned=previous.instance_assigned if previous else True,
        creation_time=previous.creation_time if previous else None,
        last_modified_time=previous.last_modified_time if previous else None,
        polls=polls,
        next_wait_s=next_wait(polls, request.spec.wait),
        waited_s=round(waited, 1),
    )
