"""Real-time endpoint on the Hugging Face inference DLC: model + endpoint config + endpoint."""

from __future__ import annotations

from functools import partial
from typing import Any, TypeVar

from workflows.contracts import DeployRequest
from workflows.hosting.base import AwsClients, InstanceMode, Planned
from workflows.hosting.checks import DOWNLOAD_TIMEOUT, INSTANCE_TYPES, STARTUP_TIMEOUT, memory_check
from workflows.hosting.create_calls import VARIANT, model_server_environment
from workflows.hosting.image_choice import image_for
from workflows.hosting.pools import POOLS
from workflows.hosting.spec_bases import ModelServerSettings
from workflows.hosting.specs import RealtimeHosting
from workflows.images.table import HF_INFERENCE
from workflows.preflight.gpu import GPU_RUNTIME
from workflows.preflight.realtime import ONNX_ARTIFACT_CHECKS, cuda_driver
from workflows.preflight.registry import Check
from workflows.settings import Settings

__all__ = ["VARIANT", "RealtimeMode", "hf_container", "hf_image", "one_hf_model"]


ServedT = TypeVar("ServedT", bound=ModelServerSettings)

# The spec's image, else the HF PyTorch inference DLC for the instance's device.
hf_image = partial(image_for, HF_INFERENCE)


def hf_container(image: str, model_data_url: str, hosting: ModelServerSettings) -> dict[str, Any]:
    """A CreateModel container of the HF inference DLC serving a model.tar.gz (``code/inference.py``)."""
    return {"Image": image, "ModelDataUrl": model_data_url, "Environment": model_server_environment(hosting)}


def one_hf_model(request: DeployRequest, hosting: ServedT, image: str) -> Planned[ServedT]:
    """The run's packed artifact as the one model, on the HF inference DLC ``image``."""
    container = hf_container(image, request.pack.model_data_uri, hosting)
    return Planned(hosting, models=[{"PrimaryContainer": container}])


class RealtimeMode(InstanceMode[RealtimeHosting]):
    mode = "realtime"
    spec_type = RealtimeHosting
    checks = (
        INSTANCE_TYPES,
        POOLS,
        Check(
            "model x workers vs instance memory",
            ("F02", "F07"),
            memory_check(lambda hosting: 1),
            ("model_size",),
        ),
        STARTUP_TIMEOUT,
        DOWNLOAD_TIMEOUT,
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
        return one_hf_model(request, hosting, hf_image(hosting, instance_type, settings.region))


STRATEGY = RealtimeMode()
