"""StartRedeploy: the S3 rule's target; starts the redeploy pipeline once per uploaded version.

The rule's input transformer has already turned the ``Object Created`` event into the
pipeline's input (``RedeployTrigger``); this handler only names the execution and starts it.
"""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.redeploy.triggers import STATE_MACHINE_ENV, RedeployTrigger, start_redeploy


@lambda_handler(RedeployTrigger)
def handler(event: RedeployTrigger, context: LambdaContext) -> dict[str, Any]:
    outcome = start_redeploy(
        event, sfn=clients.stepfunctions(), state_machine_arn=os.environ[STATE_MACHINE_ENV]
    )
    logger.info(
        "redeploy",
        extra={
            "key": event.key,
            "version": event.version_id,
            "execution": outcome.execution_arn,
            "duplicate": outcome.duplicate,
        },
    )
    metrics.add_metric(
        name="RedeployDuplicates" if outcome.duplicate else "RedeploysStarted", unit=MetricUnit.Count, value=1
    )
    return outcome.model_dump(mode="json")
