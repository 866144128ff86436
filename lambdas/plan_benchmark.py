"""PlanBenchmark: choose the benchmark runner (this Lambda family or a processing job)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas.observability import logger, metrics, tracer
from workflows.contracts import BenchmarkPlanRequest
from workflows.steps.plan_benchmark import plan


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
@event_parser(model=BenchmarkPlanRequest)
def handler(event: BenchmarkPlanRequest, context: LambdaContext) -> dict[str, Any]:
    result = plan(event)
    logger.info(
        "benchmark runner", extra={"run_id": event.run_id, "runner": result.runner, "why": result.reason}
    )
    return result.model_dump(mode="json")
