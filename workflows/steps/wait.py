"""Wait loop step: describe the endpoint once, decide the next wait, recognise stalls early.

The state machine runs Describe -> Choice -> Wait(SecondsPath) -> Describe, so each poll is one
short Lambda call and the waiting costs no compute. Once the endpoint is InService the hosting mode
advances on each poll (inference components are placed and their copies checked, scaling
registered, vLLM's served model verified): the status turns InService only when the mode serves.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from workflows import clock
from workflows.aws import aws_errors
from workflows.clock import as_datetime
from workflows.contracts import DescribeRequest, EndpointStatus
from workflows.errors import CapacityStall, EndpointFailed, EndpointWaitTimeout
from workflows.hosting.base import AwsClients, Progress
from workflows.hosting.modes import strategy_for

if TYPE_CHECKING:
    from types_boto3_application_autoscaling import ApplicationAutoScalingClient
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_sagemaker import SageMakerClient
    from types_boto3_sagemaker_runtime import SageMakerRuntimeClient

IN_SERVICE = "InService"
FAILED = "Failed"


def next_wait_seconds(polls: int, *, initial: int, maximum: int, backoff: float) -> int:
    """Exponential backoff: initial, initial*backoff, ... capped at maximum."""
    return int(min(maximum, round(initial * backoff ** max(0, polls - 1))))


# What a pending variant's status list says once the deployment has moved past waiting for an
# instance (botocore's VariantStatus enum: Creating, Updating, Deleting, ActivatingTraffic, Baking).
_PAST_CREATING = {"Updating", "ActivatingTraffic", "Baking"}


def _pending_variants(description: dict[str, Any]) -> list[dict[str, Any]]:
    return list((description.get("PendingDeploymentSummary") or {}).get("ProductionVariants") or [])


def instance_assigned(description: dict[str, Any]) -> bool:
    """Whether DescribeEndpoint shows that an instance was ever assigned to the endpoint.

    Assumption (the field's F06 evidence, never documented by AWS): ``ProductionVariants`` stays
    absent from a Creating endpoint until an instance is assigned to it, so its presence alone says
    capacity was found. ``PendingDeploymentSummary`` (the deployment in progress, returned while
    Creating or Updating) is read as well, because the assumption may not hold for every endpoint
    type or region: a pending variant with ``CurrentInstanceCount`` of 1 or more, or with a
    ``VariantStatus`` past Creating, has its instance, however slowly its container starts.
    """
    if description.get("ProductionVariants"):
        return True
    for variant in _pending_variants(description):
        if (variant.get("CurrentInstanceCount") or 0) > 0:
            return True
        if any(status.get("Status") in _PAST_CREATING for status in variant.get("VariantStatus") or []):
            return True
    return False


def _pending_counts(description: dict[str, Any]) -> str:
    counts = [
        f"{v.get('CurrentInstanceCount', 0)} of {v['DesiredInstanceCount']}"
        for v in _pending_variants(description)
        if "DesiredInstanceCount" in v
    ]
    return f", PendingDeploymentSummary instances {', '.join(counts)}" if counts else ""


def stalled_for(description: dict[str, Any], now: datetime) -> float | None:
    """Seconds the endpoint has sat in Creating with no instance assigned, else None (F06).

    The field's stall: Creating, no ``ProductionVariants`` at all (no instance was ever assigned),
    ``LastModifiedTime`` frozen a second after creation. Where ``PendingDeploymentSummary`` is
    returned, its variants must show no instance either (``CurrentInstanceCount`` 0 of
    ``DesiredInstanceCount``, status still Creating), and the stall is counted from the latest sign
    of change (LastModifiedTime, the summary's or a variant status's StartTime), so a healthy but
    slow creation is never taken for a capacity stall. Timestamps may be datetimes, ISO text or
    epoch seconds (the execution state holds ISO text).
    """
    if description.get("EndpointStatus") != "Creating" or instance_assigned(description):
        return None
    pending = description.get("PendingDeploymentSummary") or {}
    candidates = [
        description.get("LastModifiedTime") or description.get("CreationTime"),
        pending.get("StartTime"),
        *(
            status.get("StartTime")
            for variant in _pending_variants(description)
            for status in variant.get("VariantStatus") or []
        ),
    ]
    moments = [moment for moment in map(as_datetime, candidates) if moment is not None]
    return (now - max(moments)).total_seconds() if moments else None


def describe(
    request: DescribeRequest,
    *,
    sagemaker: SageMakerClient,
    autoscaling: ApplicationAutoScalingClient | None = None,
    cloudwatch: CloudWatchClient | None = None,
    runtime: SageMakerRuntimeClient | None = None,
) -> EndpointStatus:
    """One poll of the endpoint, then of what the hosting mode places on it.

    Raises:
        EndpointFailed: status Failed (FailureReason quoted, even when empty).
        CapacityStall: no instance assigned past ``wait.stall_threshold_min``.
        EndpointWaitTimeout: not serving within ``wait.timeout_min``.
        InferenceComponentFailed: a component Failed or is short of copies (F09).
        ServedModelMismatch: the endpoint serves another model than requested (F26).
    """
    name = request.deploy.endpoint_name
    with aws_errors(f"describe endpoint {name}"):
        description: dict[str, Any] = dict(sagemaker.describe_endpoint(EndpointName=name))
    now = clock.now()
    status = description["EndpointStatus"]
    reason = description.get("FailureReason")
    polls = (request.poll.polls if request.poll else 0) + 1
    waited = (now - request.deploy.created_at).total_seconds()
    wait = request.spec.wait
    if status == FAILED:
        raise EndpointFailed(
            f"endpoint {name} is Failed after {waited:.0f} s; FailureReason: {reason or '(empty)'}; "
            f"ProductionVariants: {'present' if description.get('ProductionVariants') else 'absent'}."
        )
    progress = Progress(ready=False, phase="endpoint")
    if status == IN_SERVICE:
        clients = AwsClients(
            sagemaker=sagemaker, autoscaling=autoscaling, cloudwatch=cloudwatch, runtime=runtime
        )
        progress = strategy_for(request.deploy.mode).advance(request, clients=clients)
    if status != IN_SERVICE:
        stall = stalled_for(description, now)
        if stall is not None and stall >= wait.stall_threshold_min * 60:
            raise CapacityStall(
                f"endpoint {name} on {request.deploy.instance_type} is Creating with no ProductionVariants and "
                f"LastModifiedTime frozen for {stall / 60:.1f} min{_pending_counts(description)}: no instance "
                "was assigned (F06).",
                fix="retry on another instance type of the fallback list",
            )
    if not progress.ready and waited >= wait.timeout_min * 60:
        waiting_for = status if status != IN_SERVICE else f"InService, still placing {progress.phase}"
        raise EndpointWaitTimeout(f"endpoint {name} is still {waiting_for} after {waited / 60:.1f} min.")
    return EndpointStatus(
        status=IN_SERVICE if progress.ready else (status if status != IN_SERVICE else "Creating"),
        endpoint_status=status,
        phase=progress.phase,
        components=progress.components,
        failure_reason=reason,
        has_variants=bool(description.get("ProductionVariants")),
        instance_assigned=instance_assigned(description),
        creation_time=description.get("CreationTime"),
        last_modified_time=description.get("LastModifiedTime"),
        polls=polls,
        next_wait_s=next_wait_seconds(
            polls, initial=wait.poll_initial_s, maximum=wait.poll_max_s, backoff=wait.backoff
        ),
        waited_s=round(waited, 1),
    )
