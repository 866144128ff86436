"""The Powertools logger, tracer and metrics every handler shares (configured by environment:
POWERTOOLS_SERVICE_NAME, POWERTOOLS_LOG_LEVEL, POWERTOOLS_METRICS_NAMESPACE), and the one decorator
stack that wraps every handler in them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.parser import event_parser
from pydantic import BaseModel

logger = Logger()
tracer = Tracer()
metrics = Metrics()

Handler = Callable[..., dict[str, Any]]


def lambda_handler(
    model: type[BaseModel] | None, *, publishes_metrics: bool = True
) -> Callable[[Handler], Handler]:
    """Wrap a handler in the Powertools stack, outermost first: the Lambda context in every log line, a
    trace segment, the metrics flushed on return, the event parsed into ``model``.

    Args:
        model: The request the event is parsed into; None hands the handler the raw event (it validates
            it itself, to fail with the project's own error).
        publishes_metrics: False for a handler that adds no metric (Powertools warns when none is published).
    """

    def decorate(handler: Handler) -> Handler:
        wrapped = handler if model is None else event_parser(model=model)(handler)
        if publishes_metrics:
            wrapped = metrics.log_metrics(wrapped)
        return logger.inject_lambda_context(tracer.capture_lambda_handler(wrapped))

    return decorate


__all__ = ["MetricUnit", "lambda_handler", "logger", "metrics", "tracer"]
