"""CollectBenchmarkResults: read the finished job's figures into the execution state."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import BenchmarkJobRequest
from workflows.steps.collect_benchmark_results import collect


@lambda_handler(BenchmarkJobRequest)
def handler(event: BenchmarkJobRequest, context: LambdaContext) -> dict[str, Any]:
    result = collect(event, s3=clients.s3(), sagemaker=clients.sagemaker_in(event.deploy.region))
    logger.info("benchmark collected", extra={"run_id": event.run_id, "shapes": len(result.shapes)})
    metrics.add_metric(name="BenchmarkSeconds", unit=MetricUnit.Seconds, value=result.seconds)
    return result.model_dump(mode="json")
