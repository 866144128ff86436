"""Serverless endpoint on the HF inference DLC: ServerlessConfig instead of instances.

Memory is 1024...6144 MB in 1 GB steps, the only values SageMaker accepts; the container, PyTorch
and the tokenizer cost several times the model (1137 MB of ONNX died at 2048 MB, served at 6144,
F14). A cold start can outlast botocore's 60 s read timeout, so the client reads for 300 s (F15,
``workflows/benchmark/policy.py``). ``provisioned_concurrency`` keeps that many containers started
(ServerlessConfig.ProvisionedConcurrency), so requests up to it meet no cold start (F15, F16) at a
price for every second the endpoint exists (``workflows/reports/cost.py``).
"""

from __future__ import annotations

from typing import Any

from workflows.contracts import DeployRequest, Finding
from workflows.hosting.base import AwsClients, HostingMode, Planned
from workflows.hosting.create_calls import VARIANT
from workflows.hosting.realtime import hf_image, one_hf_model
from workflows.hosting.specs import ServerlessHosting
from workflows.preflight.context import PreflightContext
from workflows.preflight.memory import check_serverless_memory
from workflows.preflight.realtime import ONNX_ARTIFACT_CHECKS
from workflows.preflight.registry import Check
from workflows.settings import Settings

INSTANCE_TYPE = "serverless"
"""What DeployResult.instance_type says for a serverless endpoint (it has no instance type)."""


def _memory(context: PreflightContext, hosting: ServerlessHosting) -> list[Finding]:
    assert context.model_mb is not None
    return check_serverless_memory(memory_mb=hosting.memory_size_mb, model_mb=context.model_mb)


class ServerlessMode(HostingMode[ServerlessHosting]):
    mode = "serverless"
    spec_type = ServerlessHosting
    image_devices = ("cpu",)
    checks = (
        Check("serverless memory vs the model", ("F14",), _memory, ("model_size",)),
        *ONNX_ARTIFACT_CHECKS,
    )

    def instance_type(self, request: DeployRequest, hosting: ServerlessHosting) -> str:
        return INSTANCE_TYPE

    def plan(
        self,
        request: DeployRequest,
        hosting: ServerlessHosting,
        instance_type: str,
        *,
        clients: AwsClients,
        settings: Settings,
    ) -> Planned[ServerlessHosting]:
        # No instance: the CPU build of the HF inference DLC.
        return one_hf_model(request, hosting, hf_image(hosting, None, settings.region))

    def variant(self, hosting: ServerlessHosting, *, instance_type: str, models: list[str]) -> dict[str, Any]:
        config: dict[str, Any] = {
            "MemorySizeInMB": hosting.memory_size_mb,
            "MaxConcurrency": hosting.max_concurrency,
        }
        if hosting.provisioned_concurrency is not None:
            config["ProvisionedConcurrency"] = hosting.provisioned_concurrency
        return {"VariantName": VARIANT, "ModelName": models[0], "ServerlessConfig": config}


STRATEGY = ServerlessMode()
