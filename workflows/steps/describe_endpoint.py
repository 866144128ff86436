"""DescribeEndpoint: one poll of the endpoint, the next wait decided, a capacity stall recognised early.

The state machine runs Describe -> Choice -> Wait(SecondsPath) -> Describe, so each poll is one
short Lambda call and the waiting costs no compute. It never creates anything: once the endpoint
is InService, a mode that places inference components reports the phase ``components`` and the
pipeline goes on to PlaceInferenceComponents; any other mode checks that it serves (vLLM's
served model, F26, is one request) and reports ``ready``, or ``route`` when the endpoint is in another
Region than the run's (the pipeline then creates the router, CreateInferenceRouter).
"""

from __future__ import annotations

from typing import Any

from workflows import clock
from workflows.aws.clients import aws_errors
from workflows.contracts import DescribeRequest, EndpointStatus
from workflows.errors import CapacityStall, EndpointFailed
from workflows.hosting import pools
from workflows.hosting.base import AwsClients, Progress
from workflows.hosting.modes import strategy_for
from workflows.hosting.polling import (
    instance_assigned,
    next_wait,
    pending_counts,
    poll_number,
    refuse_past_budget,
    stalled_for,
)

IN_SERVICE = "InService"
FAILED = "Failed"
ROUTE = "route"
"""The phase of an InService endpoint in another Region of hosting.regions: the router comes next."""


def describe(request: DescribeRequest, *, sagemaker: Any, runtime: Any = None) -> EndpointStatus:
    """One poll of the endpoint.

    Raises:
        EndpointFailed: status Failed (FailureReason quoted, even when empty).
        CapacityStall: no instance assigned past ``wait.stall_threshold_min``.
        EndpointWaitTimeout: not InService within ``wait.timeout_min``.
        ServedModelMismatch: the endpoint serves another model than requested (F26).
    """
    name = request.deploy.endpoint_name
    with aws_errors(f"describe endpoint {name}"):
        description = sagemaker.describe_endpoint(EndpointName=name)
    now = clock.now()
    status = description["EndpointStatus"]
    reason = description.get("FailureReason")
    polls = poll_number(request)
    waited = (now - request.deploy.created_at).total_seconds()
    wait = request.spec.wait
    pooled = request.deploy.instance_pools
    counts = pools.pool_counts(description, pooled) if pooled else []
    pools_line = pools.describe_counts(counts, devices=bool(request.deploy.device_models))
    if status == FAILED:
        raise EndpointFailed(
            f"endpoint {name} is Failed after {waited:.0f} s; FailureReason: {reason or '(empty)'}; "
            f"ProductionVariants: {'present' if description.get('ProductionVariants') else 'absent'}"
            + (_exhausted(counts, pools_line) if pooled and not pools.served_types(counts) else ".")
        )
    progress = Progress(ready=False, phase="endpoint")
    if status == IN_SERVICE:
        strategy = strategy_for(request.deploy.mode)
        # Components are created by PlaceInferenceComponents: a describe never creates.
        progress = (
            Progress(ready=False, phase="components")
            if strategy.uses_components
            else strategy.advance(request, clients=AwsClients(sagemaker=sagemaker, runtime=runtime))
        )
    else:
        stall = stalled_for(description, now)
        # SageMaker is still walking the pools until its provision timeout: that is not a stall yet.
        threshold = max(wait.stall_threshold_min * 60, request.deploy.provision_timeout_s or 0)
        if stall is not None and stall >= threshold and not pools.served_types(counts):
            if pooled:
                raise CapacityStall(
                    f"endpoint {name} is Creating with no instance in any pool past the "
                    f"{request.deploy.provision_timeout_s} s provision timeout"
                    f"{_exhausted(counts, pools_line)}",
                    fix="retry on the types after the first pool, or in another region, or after some time",
                )
            raise CapacityStall(
                f"endpoint {name} on {request.deploy.instance_type} is Creating with no ProductionVariants and "
                f"LastModifiedTime frozen for {stall / 60:.1f} min{pending_counts(description)}: no instance "
                "was assigned (F06).",
                fix="retry on another instance type of the fallback list",
            )
    if progress.phase == "endpoint":
        refuse_past_budget(request, waited, status)
    phase = ROUTE if progress.ready and request.deploy.region else progress.phase
    return EndpointStatus(
        status=IN_SERVICE if progress.ready else (status if status != IN_SERVICE else "Creating"),
        endpoint_status=status,
        phase=phase,
        components=progress.components,
        failure_reason=reason,
        has_variants=bool(description.get("ProductionVariants")),
        instance_assigned=instance_assigned(description),
        creation_time=description.get("CreationTime"),
        last_modified_time=description.get("LastModifiedTime"),
        polls=polls,
        next_wait_s=next_wait(polls, wait),
        waited_s=round(waited, 1),
        instance_pools={pool.instance_type: pool.count for pool in counts},
        pools_line=pools_line,
    )


def _exhausted(counts: list[pools.PoolCount], line: str) -> str:
    """The pooled-exhausted evidence the diagnosis reads (F06 with instance pools)."""
    return f"; instance pools exhausted, no pool has an instance ({line}) (F06)."
