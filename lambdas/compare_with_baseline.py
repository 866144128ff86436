"""CompareWithBaseline: gather a sweep's results into one report and judge it against the baseline."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.sweeps.report import CompareRequest, compare_sweep


@lambda_handler(CompareRequest)
def handler(event: CompareRequest, context: LambdaContext) -> dict[str, Any]:
    result = compare_sweep(event, s3=clients.s3(), settings=clients.settings())
    logger.info(
        "compared",
        extra={"sweep_id": result.sweep_id, "verdict": result.verdict, "report": result.report_uri},
    )
    metrics.add_metric(name="SweepRegressions", unit=MetricUnit.Count, value=result.regressions)
    metrics.add_metric(name="SweepRunsFailed", unit=MetricUnit.Count, value=result.failed_count)
    return result.model_dump(mode="json")
