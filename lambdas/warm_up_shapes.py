"""WarmUpShapes: warm every shape until its latency is stable."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import WarmupRequest
from workflows.steps.warm_up_shapes import warmup

# Leave the handler time to return and log: shapes left unwarmed go to the processing job.
MARGIN_S = 30.0


@lambda_handler(WarmupRequest)
def handler(event: WarmupRequest, context: LambdaContext) -> dict[str, Any]:
    budget = context.get_remaining_time_in_millis() / 1000 - MARGIN_S
    result = warmup(
        event,
        runtime=clients.runtime_in(event.deploy.region),
        time_budget_s=budget,
        router_runtime=clients.router_runtime(event.router.region) if event.router else None,
    )
    logger.info("warmed", extra={"run_id": event.run_id, "requests": sum(s.requests for s in result.shapes)})
    metrics.add_metric(name="WarmupSeconds", unit=MetricUnit.Seconds, value=result.seconds)
    return result.model_dump(mode="json")
