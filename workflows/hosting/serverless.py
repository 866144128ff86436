"""Serverless endpoint on the HF inference DLC: ServerlessConfig instead of instances.

Memory is 1024...6144 MB in 1 GB steps, the only values SageMaker accepts; the container, PyTorch
and the tokenizer cost several times the model (1137 MB of ONNX died at 2048 MB, served at 6144,
F14). A cold start can outlast botocore's 60 s read timeout, so the client reads for 300 s (F15,
``workflows/benchmark/policy.py``).
"""

from __future__ import annotations

from typing import Any, cast

from workflows import naming
from workflows.contracts import DeployRequest, DeployResult, Finding
from workflows.hosting.base import (
    VARIANT,
    AwsClients,
    HostingMode,
    create_model,
    image_for,
    model_server_environment,
    run_tags,
)
from workflows.hosting.specs import ServerlessHosting
from workflows.images import HF_INFERENCE
from workflows.preflight.context import PreflightContext
from workflows.preflight.memory import check_serverless_memory
from workflows.preflight.realtime import ONNX_ARTIFACT_CHECKS
from workflows.preflight.registry import Check, register
from workflows.remediation.overrides import with_overrides
from workflows.settings import Settings

INSTANCE_TYPE = "serverless"
"""What DeployResult.instance_type says for a serverless endpoint (it has no instance type)."""


class ServerlessMode(HostingMode):
    mode = "serverless"
    image_devices = ("cpu",)

    def deploy(self, request: DeployRequest, *, clients: AwsClients, settings: Settings) -> DeployResult:
        hosting = cast(ServerlessHosting, with_overrides(request.spec.hosting, request.attempt.overrides))
        attempt = request.attempt.number
        tags = run_tags(request)
        model = naming.model_name(request.run_id, attempt)
        create_model(
            clients.sagemaker,
            model,
            settings=settings,
            tags=tags,
            hosting=hosting,
            PrimaryContainer={
                "Image": image_for(HF_INFERENCE, hosting, None, settings.region),
                "ModelDataUrl": request.pack.model_data_uri,
                "Environment": model_server_environment(hosting),
            },
        )
        variant = {
            "VariantName": VARIANT,
            "ModelName": model,
            "ServerlessConfig": {
                "MemorySizeInMB": hosting.memory_size_mb,
                "MaxConcurrency": hosting.max_concurrency,
            },
        }
        return self.open_endpoint(
            request,
            clients,
            hosting=hosting,
            model=model,
            instance_type=INSTANCE_TYPE,
            variants=[variant],
            tags=tags,
        )


STRATEGY = ServerlessMode()


def _memory(context: PreflightContext) -> list[Finding]:
    hosting: Any = context.spec.hosting
    assert context.model_mb is not None
    return check_serverless_memory(memory_mb=hosting.memory_size_mb, model_mb=context.model_mb)


register(
    STRATEGY.mode,
    Check("serverless memory vs the model", ("F14",), _memory, ("model_size",)),
    *ONNX_ARTIFACT_CHECKS,
)
