"""ReadUploadedSpec: read the uploaded run spec at its version and snapshot the model folder beside it."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import lambda_handler, logger
from workflows.redeploy.prepare import PrepareRequest, prepare_redeploy


@lambda_handler(PrepareRequest, publishes_metrics=False)
def handler(event: PrepareRequest, context: LambdaContext) -> dict[str, Any]:
    plan = prepare_redeploy(event, s3=clients.s3(), settings=clients.settings())
    logger.info(
        "redeploy planned",
        extra={"run_id": plan.pipeline.run_id, "spec": plan.spec_uri, "source": plan.source_uri},
    )
    return plan.model_dump(mode="json")
