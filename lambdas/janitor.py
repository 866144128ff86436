"""Janitor: on a schedule, delete what runs left behind past their TTL and report it."""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.janitor.cleanup import REGIONS_ENV, TOPIC_ENV, other_regions, run_janitor


class JanitorRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dry_run: bool = False


@lambda_handler(JanitorRequest)
def handler(event: JanitorRequest, context: LambdaContext) -> dict[str, Any]:
    report = run_janitor(
        **clients.endpoint(),
        s3=clients.s3(),
        sns=clients.sns(),
        bucket=clients.settings().bucket,
        topic_arn=os.environ.get(TOPIC_ENV),
        dry_run=event.dry_run,
        regions=other_regions(os.environ.get(REGIONS_ENV), clients.settings().region),
        regional=clients.sagemaker_in,
    )
    for leak in report.leaks:
        # "name" is a reserved LogRecord attribute: log the resource under another key.
        logger.warning(
            "leak",
            extra={"kind": leak.kind, "resource": leak.name, "action": leak.action, "detail": leak.detail},
        )
    # The monitoring alarm watches LeakedResources: anything found past its TTL is a leak, removed or not.
    metrics.add_metric(name="LeakedResources", unit=MetricUnit.Count, value=len(report.leaks))
    metrics.add_metric(name="LeakedResourcesRemoved", unit=MetricUnit.Count, value=report.removed)
    metrics.add_metric(name="LeakedResourcesRemaining", unit=MetricUnit.Count, value=report.remaining)
    metrics.add_metric(name="JanitorErrors", unit=MetricUnit.Count, value=len(report.errors))
    return report.model_dump(mode="json")
