"""CreateInferenceRouter: the run's router in the primary Region over its endpoints across Regions."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import lambda_handler, logger
from workflows.contracts import RouterRequest
from workflows.steps.create_inference_router import create_router


@lambda_handler(RouterRequest)
def handler(event: RouterRequest, context: LambdaContext) -> dict[str, Any]:
    result = create_router(
        event, sagemaker=clients.sagemaker(), regional=clients.sagemaker_in, settings=clients.settings()
    )
    logger.info(
        "router created",
        extra={
            "run_id": event.run_id,
            "router": result.name,
            "destinations": [d.arn for d in result.destinations],
        },
    )
    return result.model_dump(mode="json")
