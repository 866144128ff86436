"""The endpoint poll's arithmetic: its backoff, the capacity stall (F06) and the wait budget.

Shared by the two polling steps, DescribeEndpoint (the endpoint) and PlaceInferenceComponents (what
the hosting mode places on it once it is InService), and read back by the diagnosis.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from workflows.backoff import Backoff
from workflows.clock import as_datetime
from workflows.contracts import DescribeRequest
from workflows.errors import EndpointWaitTimeout
from workflows.spec.pipeline import WaitSpec


def next_wait_seconds(polls: int, *, initial: int, maximum: int, backoff: float) -> int:
    """Exponential backoff: initial, initial*backoff, ... capped at maximum."""
    return Backoff(initial, backoff, maximum).whole_seconds(polls)


# What a pending variant's status list says once the deployment has moved past waiting for an
# instance (botocore's VariantStatus enum: Creating, Updating, Deleting, ActivatingTraffic, Baking).
_PAST_CREATING = {"Updating", "ActivatingTraffic", "Baking"}


def pending_variants(description: dict[str, Any]) -> list[dict[str, Any]]:
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
    for variant in pending_variants(description):
        if (variant.get("CurrentInstanceCount") or 0) > 0:
            return True
        if any(status.get("Status") in _PAST_CREATING for status in variant.get("VariantStatus") or []):
            return True
    return False


def pending_counts(description: dict[str, Any]) -> str:
    counts = [
        f"{v.get('CurrentInstanceCount', 0)} of {v['DesiredInstanceCount']}"
        for v in pending_variants(description)
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
            for variant in pending_variants(description)
            for status in variant.get("VariantStatus") or []
        ),
    ]
    moments = [moment for moment in map(as_datetime, candidates) if moment is not None]
    return (now - max(moments)).total_seconds() if moments else None


def poll_number(request: DescribeRequest) -> int:
    """This poll's number: one more than the last one's (the wait loops carry it in ``$.endpoint``)."""
    return (request.poll.polls if request.poll else 0) + 1


def next_wait(polls: int, wait: WaitSpec) -> int:
    """Seconds until the next poll of either loop."""
    return next_wait_seconds(
        polls, initial=wait.poll_initial_s, maximum=wait.poll_max_s, backoff=wait.backoff
    )


def refuse_past_budget(request: DescribeRequest, waited_s: float, waiting_for: str) -> None:
    """Raises EndpointWaitTimeout once the hosting has not served within ``wait.timeout_min``."""
    if waited_s >= request.spec.wait.timeout_min * 60:
        raise EndpointWaitTimeout(
            f"endpoint {request.deploy.endpoint_name} is still {waiting_for} after {waited_s / 60:.1f} min."
        )
