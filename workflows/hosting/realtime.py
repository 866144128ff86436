"""Real-time endpoint on the Hugging Face inference DLC: model + endpoint config + endpoint."""

from __future__ import annotations

from functools import partial

from workflows.contracts import DeployRequest
from workflows.hosting.base import (
    VARIANT,
    AwsClients,
    InstanceMode,
    Planned,
    image_for,
    model_server_environment,
)
from workflows.hosting.checks import INSTANCE_TYPES, STARTUP_TIMEOUT, memory_check
from workflows.hosting.specs import RealtimeHosting
from workflows.images import HF_INFERENCE
from workflows.preflight.gpu import GPU_RUNTIME
from workflows.preflight.realtime import ONNX_ARTIFACT_CHECKS, cuda_driver
from workflows.preflight.registry import Check
from workflows.settings import Settings

__all__ = ["VARIANT", "RealtimeMode", "hf_image"]


# The spec's image, else the HF PyTorch inference DLC for the instance's device.
hf_image = partial(image_for, HF_INFERENCE)


class RealtimeMode(InstanceMode[RealtimeHosting]):
    mode = "realtime"
    spec_type = RealtimeHosting
    checks = (
        INSTANCE_TYPES,
        Check(
            "model x workers vs instance memory",
            ("F02", "F07"),
            memory_check(lambda hosting: 1),
            ("model_size",),
        ),
        STARTUP_TIMEOUT,
        Check("image CUDA vs the instance's GPU driver", ("F20",), cuda_driver),
        *ONNX_ARTIFACT_CHECKS,
        GPU_RUNTIME,
    )

    def plan(
        self,
        request: DeployRequest,
        hosting: RealtimeHosting,
        instance_type: str,
        *,
        clients: AwsClients,
        settings: Settings,
    ) -> Planned[RealtimeHosting]:
        container = {
            "Image": hf_image(hosting, instance_type, settings.region),
            "ModelDataUrl": request.pack.model_data_uri,
            "Environment": model_server_environment(hosting),
        }
        return Planned(hosting, models=[{"PrimaryContainer": container}])


STRATEGY = RealtimeMode()
