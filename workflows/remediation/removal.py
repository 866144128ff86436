"""RemoveFailedAttempt: delete the failed attempt's endpoint, config and models before the next one.

Best effort by design: what cannot be deleted yet stays for the final teardown, which finds every
resource of the run by its name prefix and retries busy ones. A stalled endpoint (F06) is the
case in point: AWS refuses to delete an endpoint while it is Creating (the field's stall lasted
~50 min before Failed), so the next attempt deploys under a new name and the stalled one is left.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from workflows import naming
from workflows.aws.clients import error_code, error_message, is_busy, is_not_found, translate
from workflows.contracts import AttemptRequest, DeployAttempt
from workflows.errors import AwsServiceUnavailable, AwsThrottled
from workflows.hosting import resources
from workflows.hosting.resources import ENDPOINT, ENDPOINT_CONFIG, MODEL, ResourceKind

if TYPE_CHECKING:
    from types_boto3_sagemaker import SageMakerClient


def _delete(sagemaker: Any, kind: ResourceKind, name: str, removed: list[str], left: list[str]) -> bool:
    """Delete one resource; True when it is gone (deleted now or before)."""
    label = kind.label(name)
    try:
        resources.delete_call(sagemaker, kind)(**{kind.name_key: name})
    except ClientError as error:
        if is_not_found(error):
            return True
        translated = translate(error, f"delete {label}")
        if isinstance(translated, AwsThrottled | AwsServiceUnavailable):
            raise translated from error
        why = (
            "busy, teardown retries it" if is_busy(error) else f"{error_code(error)}: {error_message(error)}"
        )
        left.append(f"{label} ({why})")
        return False
    removed.append(label)
    return True


def remove_failed_attempt(request: AttemptRequest, *, sagemaker: SageMakerClient) -> DeployAttempt:
    """Delete the resources of the attempt the last history record describes.

    The endpoint goes first; when it cannot be deleted, its config and models stay with it (the
    final teardown deletes the three together).

    Returns:
        The attempt, its last record completed with what was removed and what was left.

    Raises:
        AwsThrottled, AwsServiceUnavailable: retryable; the state machine retries the step.
    """
    attempt = request.attempt
    if not attempt.history:
        return attempt
    record = attempt.history[-1]
    failed = record.attempt
    removed: list[str] = []
    left: list[str] = []
    config = naming.endpoint_config_name(request.run_id, failed)
    models = naming.model_name(request.run_id, failed, 0).removesuffix("0")
    endpoint = naming.endpoint_name(request.run_id, failed)
    # Only what the attempt created is deleted: a refused CreateEndpoint (F39, F04...) left no
    # endpoint, and IAM refuses a delete of a resource without the managed tag, one that is not there
    # included (infra/ownership.py).
    if endpoint not in resources.find(sagemaker, ENDPOINT, endpoint) or _delete(
        sagemaker, ENDPOINT, endpoint, removed, left
    ):
        if config in resources.find(sagemaker, ENDPOINT_CONFIG, config):
            _delete(sagemaker, ENDPOINT_CONFIG, config, removed, left)
        for name in resources.find(sagemaker, MODEL, models):
            _delete(sagemaker, MODEL, name, removed, left)
    else:
        left += [
            f"{ENDPOINT_CONFIG.label(config)} (with its endpoint)",
            f"{MODEL.label(models)}* (with its endpoint)",
        ]
    history = [*attempt.history[:-1], record.model_copy(update={"removed": removed, "left": left})]
    return attempt.model_copy(update={"history": history})
