"""PackArtifact: verify the staging folder and write model.tar.gz."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.contracts import PackRequest
from workflows.steps.pack_artifact import pack


@lambda_handler(PackRequest)
def handler(event: PackRequest, context: LambdaContext) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="pack-") as workdir:
        result = pack(event, s3=clients.s3(), settings=clients.settings(), workdir=Path(workdir))
    logger.info(
        "packed", extra={"run_id": event.run_id, "uri": result.model_data_uri, "bytes": result.size_bytes}
    )
    metrics.add_metric(name="ArtifactBytes", unit=MetricUnit.Bytes, value=result.size_bytes)
    return result.model_dump(mode="json")
