"""CompareWithBaseline: gather a sweep's results into one report and judge it against the baseline."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, logger, metrics, tracer
from workflows.sweeps.report import CompareRequest, compare_sweep


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
@event_parser(model=CompareRequest)
def handler(event: CompareRequest, context: LambdaContext) -> dict[str, Any]:
    result = compare_sweep(event, s3=clients.s3(), settings=clients.settings())
    logger.info(
        "compared",
        extra={"sweep_id": result.sweep_id, "verdict": result.verdict, "report": result.report_uri},
    )
    metrics.add_metric(name="SweepRegressions", unit=MetricUnit.Count, value=result.regressions)
    metrics.add_metric(name="SweepRunsFailed", unit=MetricUnit.Count, value=result.failed_count)
    return result.model_dump(mode="json")
