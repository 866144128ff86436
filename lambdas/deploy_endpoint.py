"""DeployEndpoint: create the hosting mode's SageMaker resources."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import DeployRequest
from workflows.steps.deploy_endpoint import deploy


@lambda_handler(DeployRequest)
def handler(event: DeployRequest, context: LambdaContext) -> dict[str, Any]:
    result = deploy(
        event,
        **clients.endpoint(),
        settings=clients.settings(),
        s3=clients.s3(),
        regional=clients.sagemaker_in,
        logs=clients.logs_in,
    )
    logger.info(
        "deploying",
        extra={
            "run_id": event.run_id,
            "mode": result.mode,
            "endpoint": result.endpoint_name,
            "instance": result.instance_type,
            "region": result.region,
        },
    )
    metrics.add_metric(name="DeployAttempts", unit=MetricUnit.Count, value=1)
    return result.model_dump(mode="json")
