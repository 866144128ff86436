"""Teardown step: delete everything the run created, verify nothing is left.

Resources are found by the run's name prefix, not by what earlier steps returned, so a deploy
that failed half-way (model created, endpoint config rejected) is cleaned up too.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from workflows.aws import aws_errors, is_busy, is_not_found, paginate, translate
from workflows.contracts import PipelineState, TeardownResult
from workflows.errors import ResourceBusy, TeardownIncomplete
from workflows.naming import resource_prefix, staging_prefix
from workflows.settings import Settings
from workflows.storage import delete_prefix

GONE = {"Deleting"}


def _names(sagemaker: Any, operation: str, key: str, name_key: str, prefix: str) -> dict[str, dict[str, Any]]:
    with aws_errors(operation):
        items = paginate(sagemaker, operation, key, NameContains=prefix)
    return {item[name_key]: item for item in items if item[name_key].startswith(prefix)}


def _delete(call: Any, description: str, **kwargs: Any) -> bool:
    """True when deleted or already gone; False when busy (an endpoint still Creating cannot be deleted)."""
    try:
        call(**kwargs)
    except ClientError as error:
        if is_not_found(error):
            return True
        if is_busy(error):
            return False
        raise translate(error, description) from error
    return True


def kept_resources(state: PipelineState) -> set[str]:
    """What the user asked to keep: the endpoint of a successful run, with its config and models."""
    if not state.spec.keep_endpoint or state.error is not None or state.deploy is None:
        return set()
    deploy = state.deploy
    return {deploy.endpoint_name, deploy.endpoint_config_name, *deploy.model_names}


def teardown(state: PipelineState, *, sagemaker: Any, s3: Any, settings: Settings) -> TeardownResult:
    """Delete endpoints, then endpoint configs, then models, then the staging folder.

    Raises:
        ResourceBusy: an endpoint cannot be deleted yet (still Creating); the state machine retries.
        TeardownIncomplete: something of the run is still there after deleting.
    """
    prefix = resource_prefix(state.run_id)
    keep = kept_resources(state)
    deleted: list[str] = []
    busy: list[str] = []
    for name, item in _names(sagemaker, "list_endpoints", "Endpoints", "EndpointName", prefix).items():
        if name in keep:
            continue
        if item.get("EndpointStatus") in GONE or _delete(
            sagemaker.delete_endpoint, f"delete endpoint {name}", EndpointName=name
        ):
            deleted.append(f"endpoint/{name}")
        else:
            busy.append(f"endpoint/{name}")
    for name in _names(sagemaker, "list_endpoint_configs", "EndpointConfigs", "EndpointConfigName", prefix):
        if name not in keep and _delete(
            sagemaker.delete_endpoint_config, f"delete endpoint config {name}", EndpointConfigName=name
        ):
            deleted.append(f"endpoint-config/{name}")
    for name in _names(sagemaker, "list_models", "Models", "ModelName", prefix):
        if name not in keep and _delete(sagemaker.delete_model, f"delete model {name}", ModelName=name):
            deleted.append(f"model/{name}")
    staging = f"s3://{settings.bucket}/{staging_prefix(state.run_id)}"
    if delete_prefix(s3, staging):
        deleted.append(staging)
    if busy:
        raise ResourceBusy(
            f"cannot delete yet (still changing state): {', '.join(busy)}; deleted so far: {deleted}."
        )
    remaining = remaining_resources(state.run_id, sagemaker=sagemaker, keep=keep)
    if remaining:
        raise TeardownIncomplete(f"still present after teardown: {', '.join(remaining)}.")
    return TeardownResult(deleted=deleted, kept=sorted(keep), remaining=[])


def remaining_resources(run_id: str, *, sagemaker: Any, keep: set[str]) -> list[str]:
    """Resources of the run that exist and are not being deleted, except those kept on purpose."""
    prefix = resource_prefix(run_id)
    remaining = [
        f"endpoint/{name}"
        for name, item in _names(sagemaker, "list_endpoints", "Endpoints", "EndpointName", prefix).items()
        if name not in keep and item.get("EndpointStatus") not in GONE
    ]
    remaining += [
        f"endpoint-config/{n}"
        for n in _names(sagemaker, "list_endpoint_configs", "EndpointConfigs", "EndpointConfigName", prefix)
        if n not in keep
    ]
    remaining += [
        f"model/{n}" for n in _names(sagemaker, "list_models", "Models", "ModelName", prefix) if n not in keep
    ]
    return remaining
