"""StopBenchmarkJob: on the failure path, stop the run's benchmark job if it is still running."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import lambda_handler, logger
from workflows.contracts import BenchmarkJobRequest
from workflows.steps.stop_benchmark_job import stop


@lambda_handler(BenchmarkJobRequest)
def handler(event: BenchmarkJobRequest, context: LambdaContext) -> dict[str, Any]:
    result = stop(event, sagemaker=clients.sagemaker(), settings=clients.settings())
    logger.info("benchmark job after failure", extra={"run_id": event.run_id, "status": result.status})
    return result.model_dump(mode="json")
