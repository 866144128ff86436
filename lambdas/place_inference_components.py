"""PlaceInferenceComponents: one placement poll of the run's inference components."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import DescribeRequest
from workflows.steps.place_inference_components import place_inference_components


@lambda_handler(DescribeRequest)
def handler(event: DescribeRequest, context: LambdaContext) -> dict[str, Any]:
    result = place_inference_components(event, **clients.endpoint())
    logger.info(
        "inference components",
        extra={"run_id": event.run_id, "status": result.status, "phase": result.phase, "polls": result.polls},
    )
    metrics.add_metric(name="ComponentPolls", unit=MetricUnit.Count, value=1)
    return result.model_dump(mode="json")
