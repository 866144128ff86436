"""DescribeEndpoint: one status poll of the wait loop."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import DescribeRequest
from workflows.steps.describe_endpoint import describe


@lambda_handler(DescribeRequest)
def handler(event: DescribeRequest, context: LambdaContext) -> dict[str, Any]:
    region = event.deploy.region
    result = describe(
        event,
        sagemaker=clients.sagemaker_in(region),
        runtime=clients.runtime_in(region),
    )
    logger.info(
        "endpoint status",
        extra={"run_id": event.run_id, "status": result.status, "phase": result.phase, "polls": result.polls},
    )
    metrics.add_metric(name="EndpointPolls", unit=MetricUnit.Count, value=1)
    return result.model_dump(mode="json")
