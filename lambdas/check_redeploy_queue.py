"""CheckRedeployQueue: may this upload deploy now, must it wait for an older one, or is it superseded?"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import lambda_handler, logger
from workflows.redeploy.prepare import QueueRequest, check_queue


@lambda_handler(QueueRequest, publishes_metrics=False)
def handler(event: QueueRequest, context: LambdaContext) -> dict[str, Any]:
    decision = check_queue(event, sfn=clients.stepfunctions())
    logger.info(
        "queue", extra={"decision": decision.decision, "older": decision.older, "newer": decision.newer}
    )
    return decision.model_dump(mode="json")
