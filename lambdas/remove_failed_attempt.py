"""RemoveFailedAttempt: delete the failed attempt's resources where AWS lets us (the rest waits for teardown)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import AttemptRequest
from workflows.remediation.removal import remove_failed_attempt


@lambda_handler(AttemptRequest)
def handler(event: AttemptRequest, context: LambdaContext) -> dict[str, Any]:
    region = event.attempt.history[-1].region if event.attempt.history else None
    result = remove_failed_attempt(event, sagemaker=clients.sagemaker_in(region))
    record = result.history[-1] if result.history else None
    logger.info(
        "failed attempt removed",
        extra={
            "run_id": event.run_id,
            "removed": record.removed if record else [],
            "left": record.left if record else [],
        },
    )
    metrics.add_metric(
        name="FailedAttemptResourcesLeft", unit=MetricUnit.Count, value=len(record.left if record else [])
    )
    return result.model_dump(mode="json")
