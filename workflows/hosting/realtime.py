"""Real-time endpoint on the Hugging Face inference DLC: model + endpoint config + endpoint."""

from __future__ import annotations

from functools import partial

from workflows import naming
from workflows.contracts import DeployRequest, DeployResult
from workflows.hosting.base import (
    VARIANT,
    AwsClients,
    HostingMode,
    create_model,
    image_for,
    instance_type_for,
    instance_variant,
    model_server_environment,
    run_tags,
)
from workflows.images import HF_INFERENCE
from workflows.remediation.overrides import with_overrides
from workflows.settings import Settings

__all__ = ["VARIANT", "RealtimeMode", "hf_image"]


# The spec's image, else the HF PyTorch inference DLC for the instance's device.
hf_image = partial(image_for, HF_INFERENCE)


class RealtimeMode(HostingMode):
    mode = "realtime"

    def deploy(self, request: DeployRequest, *, clients: AwsClients, settings: Settings) -> DeployResult:
        hosting = with_overrides(request.spec.hosting, request.attempt.overrides)
        attempt = request.attempt.number
        instance_type = instance_type_for(request)
        tags = run_tags(request)
        model = naming.model_name(request.run_id, attempt)
        create_model(
            clients.sagemaker,
            model,
            settings=settings,
            tags=tags,
            hosting=hosting,
            PrimaryContainer={
                "Image": hf_image(hosting, instance_type, settings.region),
                "ModelDataUrl": request.pack.model_data_uri,
                "Environment": model_server_environment(hosting),
            },
        )
        variant = instance_variant(hosting, instance_type=instance_type, model=model)
        return self.open_endpoint(
            request,
            clients,
            hosting=hosting,
            model=model,
            instance_type=instance_type,
            variants=[variant],
            tags=tags,
        )


STRATEGY = RealtimeMode()
