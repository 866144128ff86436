"""TeardownStoppedExecution: an aborted or timed-out execution's run is torn down (EventBridge target)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.stops.teardown import ExecutionStatusChange, teardown_stopped


@lambda_handler(ExecutionStatusChange)
def handler(event: ExecutionStatusChange, context: LambdaContext) -> dict[str, Any]:
    result = teardown_stopped(
        event,
        **clients.endpoint(),
        s3=clients.s3(),
        settings=clients.settings(),
        tagging=clients.tagging(),
        regional=clients.sagemaker_in,
    )
    deleted = result.teardown.deleted if result.teardown else []
    logger.info(
        "stopped execution torn down",
        extra={
            "run_id": result.run_id,
            "status": result.status,
            "skipped": result.skipped,
            "deleted": deleted,
        },
    )
    metrics.add_metric(name="ResourcesDeleted", unit=MetricUnit.Count, value=len(deleted))
    return result.model_dump(mode="json")
