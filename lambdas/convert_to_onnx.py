"""ConvertToOnnx: export, optimise and verify the model into the run's staging folder."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import StepRequest
from workflows.steps.convert_to_onnx import convert


@lambda_handler(StepRequest)
def handler(event: StepRequest, context: LambdaContext) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="convert-") as workdir:
        # A private Hub model's token secret (model.token_secret) is read only when the spec names one.
        secrets = clients.secretsmanager() if event.spec.model.token_secret else None
        result = convert(
            event, s3=clients.s3(), settings=clients.settings(), workdir=Path(workdir), secretsmanager=secrets
        )
    logger.info("converted", extra={"run_id": event.run_id, "optimization": result.manifest.optimization})
    for warning in result.manifest.warnings:  # fallbacks taken (an optimizer past its bound, F34)
        logger.warning(warning, extra={"run_id": event.run_id})
    metrics.add_metric(name="ConvertSeconds", unit=MetricUnit.Seconds, value=result.seconds)
    return result.model_dump(mode="json")
