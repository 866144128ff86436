"""RunPreflight: static checks from the failure catalogue before any SageMaker resource exists."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import PreflightRequest
from workflows.steps.run_preflight import preflight


@lambda_handler(PreflightRequest)
def handler(event: PreflightRequest, context: LambdaContext) -> dict[str, Any]:
    result = preflight(event, s3=clients.s3())
    logger.info("preflight", extra={"run_id": event.run_id, "findings": [f.id for f in result.findings]})
    metrics.add_metric(name="PreflightWarnings", unit=MetricUnit.Count, value=len(result.findings))
    return result.model_dump(mode="json")
