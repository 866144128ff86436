"""Multi-container endpoint, Direct mode: several HF DLC containers co-hosted on one CPU instance.

Each container binds to the port SageMaker hands it (SAGEMAKER_BIND_TO_PORT), which only images
labelled ``accept-bind-to-port=true`` do (F05); Direct mode rejects GPU instances (g5.xlarge,
g5.2xlarge, g4dn.xlarge rejected, c6i.2xlarge accepted: F04). Both are refused before any call.
Every container is invoked by its ``TargetContainerHostname``; the run's own is ``main``.
"""

from __future__ import annotations

from typing import Any

from workflows.contracts import DeployRequest, Finding
from workflows.hosting.base import AwsClients, InstanceMode, Planned
from workflows.hosting.checks import (
    DOWNLOAD_TIMEOUT,
    INSTANCE_TYPES,
    STARTUP_TIMEOUT,
    each_instance_type,
    memory_check,
)
from workflows.hosting.cohosted import MAIN_MODEL
from workflows.hosting.create_calls import model_server_environment
from workflows.hosting.realtime import hf_image
from workflows.hosting.specs import MultiContainerHosting
from workflows.preflight.accelerators import check_direct_mode
from workflows.preflight.containers import check_image_labels
from workflows.preflight.context import PreflightContext
from workflows.preflight.findings import refuse_blocking
from workflows.preflight.realtime import ONNX_ARTIFACT_CHECKS
from workflows.preflight.registry import Check
from workflows.settings import Settings

DIRECT = "Direct"


def containers(request: DeployRequest, hosting: MultiContainerHosting, image: str) -> list[dict[str, Any]]:
    """The run's container (``main``) and one per co-hosted model, each with its own hostname."""
    environment = model_server_environment(hosting)
    own = {"ContainerHostname": MAIN_MODEL, "Image": image, "ModelDataUrl": request.pack.model_data_uri}
    listed = [own] + [
        {
            "ContainerHostname": model.name,
            "Image": image,
            "ModelDataUrl": model.model_data_uri or request.pack.model_data_uri,
        }
        for model in hosting.models
    ]
    return [{**container, "Environment": dict(environment)} for container in listed]


def placement_findings(*, instance_type: str, images: list[str]) -> list[Finding]:
    """F04 and F05 for one instance type and the containers' images."""
    count = max(2, len(images))
    return check_direct_mode(instance_type=instance_type, execution_mode=DIRECT, containers=count) + (
        check_image_labels(images=sorted(set(images)))
    )


def _placement(context: PreflightContext, hosting: MultiContainerHosting) -> list[Finding]:
    def one(instance_type: str) -> list[Finding]:
        image = hf_image(hosting, instance_type, context.region)
        return placement_findings(instance_type=instance_type, images=[image] * (len(hosting.models) + 1))

    return each_instance_type(hosting.instance_type_fallbacks, one)


def _containers_per_instance(hosting: MultiContainerHosting) -> int:
    return len(hosting.models) + 1


class MultiContainerMode(InstanceMode[MultiContainerHosting]):
    mode = "multi-container"
    spec_type = MultiContainerHosting
    # AWS documents pools for single-model endpoints and inference components only.
    supports_pools = False
    # Direct mode refuses GPU instances (F04).
    image_devices = ("cpu",)
    checks = (
        INSTANCE_TYPES,
        Check("Direct mode on a CPU instance, images that accept-bind-to-port", ("F04", "F05"), _placement),
        Check(
            "model x workers x containers vs instance memory",
            ("F02", "F07"),
            memory_check(_containers_per_instance),
            ("model_size",),
        ),
        STARTUP_TIMEOUT,
        DOWNLOAD_TIMEOUT,
        *ONNX_ARTIFACT_CHECKS,
    )

    def plan(
        self,
        request: DeployRequest,
        hosting: MultiContainerHosting,
        instance_type: str,
        *,
        clients: AwsClients,
        settings: Settings,
    ) -> Planned[MultiContainerHosting]:
        image = hf_image(hosting, instance_type, settings.region)
        listed = containers(request, hosting, image)
        refuse_blocking(
            placement_findings(instance_type=instance_type, images=[c["Image"] for c in listed]),
            mode=self.mode,
        )
        targets = {
            c["ContainerHostname"]: {"TargetContainerHostname": c["ContainerHostname"]} for c in listed
        }
        return Planned(
            hosting,
            models=[{"Containers": listed, "InferenceExecutionConfig": {"Mode": DIRECT}}],
            recorded={"target": targets[MAIN_MODEL], "targets": targets},
        )


STRATEGY = MultiContainerMode()
