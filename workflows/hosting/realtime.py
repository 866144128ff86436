"""Real-time endpoint on the Hugging Face inference DLC: model + endpoint config + endpoint."""

from __future__ import annotations

from workflows import clock, naming
from workflows.contracts import DeployRequest, DeployResult
from workflows.hosting.base import (
    VARIANT,
    AwsClients,
    HostingMode,
    create_endpoint,
    create_model,
    instance_type_for,
    instance_variant,
    model_server_environment,
    run_tags,
)
from workflows.hosting.specs import is_gpu_instance
from workflows.images import HF_INFERENCE, image_uri
from workflows.remediation.overrides import with_overrides
from workflows.settings import Settings

__all__ = ["VARIANT", "RealtimeMode", "hf_image"]


def hf_image(hosting: object, instance_type: str, region: str) -> str:
    """The spec's image, else the HF PyTorch inference DLC for the instance's device."""
    return getattr(hosting, "image", None) or image_uri(
        HF_INFERENCE, gpu=is_gpu_instance(instance_type), region=region
    )


class RealtimeMode(HostingMode):
    mode = "realtime"

    def deploy(self, request: DeployRequest, *, clients: AwsClients, settings: Settings) -> DeployResult:
        hosting = with_overrides(request.spec.hosting, request.attempt.overrides)
        attempt = request.attempt.number
        instance_type = instance_type_for(request)
        tags = run_tags(request)
        model = naming.model_name(request.run_id, attempt)
        config = naming.endpoint_config_name(request.run_id, attempt)
        endpoint = naming.endpoint_name(request.run_id, attempt)
        create_model(
            clients.sagemaker,
            model,
            settings=settings,
            tags=tags,
            PrimaryContainer={
                "Image": hf_image(hosting, instance_type, settings.region),
                "ModelDataUrl": request.pack.model_data_uri,
                "Environment": model_server_environment(hosting),
            },
        )
        variant = instance_variant(hosting, instance_type=instance_type, model=model)
        create_endpoint(clients.sagemaker, config=config, endpoint=endpoint, variants=[variant], tags=tags)
        return DeployResult(
            endpoint_name=endpoint,
            endpoint_config_name=config,
            model_names=[model],
            instance_type=instance_type,
            created_at=clock.now(),
            mode=self.mode,
            effective_hosting=hosting.model_dump(mode="json"),
        )


STRATEGY = RealtimeMode()
