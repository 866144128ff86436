"""RunBenchmark: measure every shape (short CPU runs; long or GPU runs use a processing job)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import BenchmarkRequest
from workflows.steps.run_benchmark import benchmark


@lambda_handler(BenchmarkRequest)
def handler(event: BenchmarkRequest, context: LambdaContext) -> dict[str, Any]:
    result = benchmark(
        event,
        runtime=clients.runtime_in(event.deploy.region),
        s3=clients.s3(),
        settings=clients.settings(),
        sagemaker=clients.sagemaker_in(event.deploy.region),
        router_runtime=clients.router_runtime(event.router.region) if event.router else None,
    )
    logger.info("measured", extra={"run_id": event.run_id, "shapes": len(result.shapes)})
    metrics.add_metric(name="BenchmarkSeconds", unit=MetricUnit.Seconds, value=result.seconds)
    return result.model_dump(mode="json")
