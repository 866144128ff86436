"""PlanBenchmark: choose the benchmark runner (this Lambda family or a processing job)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas.observability import lambda_handler, logger
from workflows.contracts import BenchmarkPlanRequest
from workflows.steps.plan_benchmark import plan


@lambda_handler(BenchmarkPlanRequest)
def handler(event: BenchmarkPlanRequest, context: LambdaContext) -> dict[str, Any]:
    result = plan(event)
    logger.info(
        "benchmark runner", extra={"run_id": event.run_id, "runner": result.runner, "why": result.reason}
    )
    return result.model_dump(mode="json")
