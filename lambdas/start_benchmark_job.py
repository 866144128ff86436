"""StartBenchmarkJob: upload the engine and its config, create the benchmark processing job."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import BenchmarkJobRequest
from workflows.steps.start_benchmark_job import start


@lambda_handler(BenchmarkJobRequest)
def handler(event: BenchmarkJobRequest, context: LambdaContext) -> dict[str, Any]:
    result = start(
        event,
        sagemaker=clients.sagemaker(),
        s3=clients.s3(),
        settings=clients.settings(),
        endpoint_sagemaker=clients.sagemaker_in(event.deploy.region),
    )
    logger.info("benchmark job started", extra={"run_id": event.run_id, "job": result.job_name})
    metrics.add_metric(name="BenchmarkJobsStarted", unit=MetricUnit.Count, value=1)
    return result.model_dump(mode="json")
