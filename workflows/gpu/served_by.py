"""Which execution provider really served the endpoint, as its own answer says (F36)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types_boto3_sagemaker_runtime import SageMakerRuntimeClient

PROBE = {"inputs": ["Which execution provider answers this?"], "parameters": {"batch_size": 1}}


def served_by(
    runtime: SageMakerRuntimeClient, endpoint_name: str, target: dict[str, str] | None = None
) -> dict[str, str] | None:
    """The ``served_by`` of one answer (provider, and the note of a GPU artifact served on CPU);
    None when the endpoint's serving code does not report it or the call fails."""
    try:
        answer = runtime.invoke_endpoint(
            EndpointName=endpoint_name,
            ContentType="application/json",
            Accept="application/json",
            Body=json.dumps(PROBE).encode("utf-8"),
            **(target or {}),
        )
        body = json.loads(answer["Body"].read())
    except Exception:  # noqa: BLE001 - a probe that fails only leaves the provider unrecorded
        return None
    found = body.get("served_by") if isinstance(body, dict) else None
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else None
