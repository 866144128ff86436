"""WriteReport / WriteFailureReport: result.json, report.md and plots under the run's results prefix."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import ReportRequest
from workflows.reports.pipeline import report


@lambda_handler(ReportRequest)
def handler(event: ReportRequest, context: LambdaContext) -> dict[str, Any]:
    result = report(
        event.state,
        s3=clients.s3(),
        settings=clients.settings(),
        status=event.status,
        cloudwatch=clients.cloudwatch(),
    )
    logger.info("reported", extra={"run_id": event.state.run_id, "result": result.result_uri})
    metrics.add_metric(name=f"Runs{event.status.title()}", unit=MetricUnit.Count, value=1)
    return result.model_dump(mode="json")
