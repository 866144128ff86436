"""DiagnoseFailure: match the caught error's evidence against the failure catalogue."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import PipelineState
from workflows.diagnosis import diagnose_failure


@lambda_handler(PipelineState)
def handler(event: PipelineState, context: LambdaContext) -> dict[str, Any]:
    result = diagnose_failure(event, sagemaker=clients.sagemaker(), logs=clients.logs())
    logger.info(
        "diagnosed",
        extra={
            "run_id": event.run_id,
            "id": result.id,
            "action": result.action,
            "confidence": result.confidence,
        },
    )
    metrics.add_metric(name=f"Failure{result.id}", unit=MetricUnit.Count, value=1)
    return result.model_dump(mode="json")
