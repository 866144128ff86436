"""DescribeBenchmarkJob: one status poll of the benchmark processing job."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import BenchmarkJobRequest
from workflows.steps.describe_benchmark_job import describe


@lambda_handler(BenchmarkJobRequest)
def handler(event: BenchmarkJobRequest, context: LambdaContext) -> dict[str, Any]:
    result = describe(event, sagemaker=clients.sagemaker(), settings=clients.settings())
    logger.info("benchmark job status", extra={"run_id": event.run_id, "status": result.status})
    metrics.add_metric(name="BenchmarkJobPolls", unit=MetricUnit.Count, value=1)
    return result.model_dump(mode="json")
