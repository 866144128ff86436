"""PlanSweep: validate a sweep and expand its matrix into the deploy pipeline inputs the Map runs."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.sweeps.plan import PlanRequest, plan_sweep


@lambda_handler(PlanRequest)
def handler(event: PlanRequest, context: LambdaContext) -> dict[str, Any]:
    plan = plan_sweep(event)
    logger.info("planned", extra={"sweep_id": plan.sweep_id, "runs": [item.key for item in plan.items]})
    metrics.add_metric(name="SweepRunsPlanned", unit=MetricUnit.Count, value=len(plan.items))
    return plan.model_dump(mode="json")
