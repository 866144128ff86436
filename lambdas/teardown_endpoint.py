"""TeardownEndpoint / TeardownAfterFailure: delete everything the run created and verify."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import PipelineState
from workflows.steps.teardown_endpoint import teardown


@lambda_handler(PipelineState)
def handler(event: PipelineState, context: LambdaContext) -> dict[str, Any]:
    result = teardown(
        event,
        **clients.endpoint(),
        s3=clients.s3(),
        settings=clients.settings(),
        tagging=clients.tagging(),
        regional=clients.sagemaker_in,
    )
    logger.info("torn down", extra={"run_id": event.run_id, "deleted": result.deleted, "kept": result.kept})
    metrics.add_metric(name="ResourcesDeleted", unit=MetricUnit.Count, value=len(result.deleted))
    return result.model_dump(mode="json")
