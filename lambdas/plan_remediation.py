"""PlanRemediation: check the diagnosis' bound, rewrite the attempt, choose the route."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import PipelineState
from workflows.remediation.plan import plan_remediation


@lambda_handler(PipelineState)
def handler(event: PipelineState, context: LambdaContext) -> dict[str, Any]:
    result = plan_remediation(event, settings=clients.settings())
    plan = result.remediation
    logger.info(
        "remediation planned",
        extra={
            "run_id": event.run_id,
            "route": plan.route if plan else None,
            "reason": plan.reason if plan else None,
            "attempt": result.attempt.number,
        },
    )
    if plan is not None and plan.route != "fail":
        metrics.add_metric(name=f"Remediation_{plan.action}", unit=MetricUnit.Count, value=1)
    return result.model_dump(mode="json")
