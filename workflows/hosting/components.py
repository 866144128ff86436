"""Inference components: an endpoint with ManagedInstanceScaling and no model, one component per model.

The endpoint is created first; components can only be placed on an InService endpoint, so the wait
loop creates them (``advance``, idempotent: a component that exists is only described) and waits
until each is InService with CurrentCopyCount equal to DesiredCopyCount. A component that is
InService with fewer copies than desired stays that way (desired 2, current 1 in the field): it is
a failure, not a wait (F09). GPU instances need NumberOfAcceleratorDevicesRequired (F08); copies x
devices of all components must fit the GPUs (F09); MinMemoryRequiredInMb sized to the instance's
RAM fails (F10).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar, cast

from workflows import naming
from workflows.aws.clients import aws_errors, is_not_found, translate
from workflows.contracts import ComponentStatus, DeployRequest, DescribeRequest, Finding
from workflows.errors import InferenceComponentFailed
from workflows.hosting.base import AwsClients, InstanceMode, Planned, Progress
from workflows.hosting.checks import (
    DOWNLOAD_TIMEOUT,
    INSTANCE_TYPES,
    STARTUP_TIMEOUT,
    containers_per_instance,
    cuda_check,
    each_instance_type,
    memory_check,
)
from workflows.hosting.cohosted import MAIN_MODEL
from workflows.hosting.create_calls import VARIANT, instance_variant
from workflows.hosting.pools import POOLS
from workflows.hosting.realtime import hf_container, hf_image
from workflows.hosting.specs import InferenceComponentHosting
from workflows.preflight.accelerators import ComponentPlacement, check_accelerator_devices, check_copies
from workflows.preflight.context import PreflightContext
from workflows.preflight.findings import refuse_blocking
from workflows.preflight.gpu import GPU_RUNTIME
from workflows.preflight.partitions import check_partitions, layout_for
from workflows.preflight.realtime import ONNX_ARTIFACT_CHECKS
from workflows.preflight.registry import Check
from workflows.settings import Settings

if TYPE_CHECKING:
    from types_boto3_sagemaker import SageMakerClient
    from types_boto3_sagemaker.type_defs import (
        InferenceComponentComputeResourceRequirementsTypeDef,
        InferenceComponentSpecificationTypeDef,
        InferenceComponentStartupParametersTypeDef,
    )

IN_SERVICE, FAILED = "InService", "Failed"

ComponentsT = TypeVar("ComponentsT", bound=InferenceComponentHosting)


def planned(hosting: InferenceComponentHosting) -> list[tuple[str, str | None, int]]:
    """(model name, its model.tar.gz or None for the run's, copies) of every component, 'main' first."""
    return [(MAIN_MODEL, None, hosting.copies)] + [
        (m.name, m.model_data_uri, m.copies or hosting.copies) for m in hosting.models
    ]


def placement_findings(hosting: InferenceComponentHosting, instance_type: str) -> list[Finding]:
    """F08 (devices on GPU) and F09 (copies x devices within the GPUs) for one instance type; with
    ``gpu_partition``, the partition layout and the copies on its partitions instead."""
    if hosting.gpu_partition is not None:
        return check_partitions(
            instance_type=instance_type,
            partition_type=hosting.gpu_partition,
            per_gpu=hosting.partitions_per_gpu,
            instance_count=hosting.instance_count,
            copies=sum(copies for _, _, copies in planned(hosting)),
        )
    findings = check_accelerator_devices(instance_type=instance_type, devices=hosting.accelerator_devices)
    if findings:
        return findings
    components = [
        ComponentPlacement(name=name, copies=copies, devices=hosting.accelerator_devices or 1)
        for name, _, copies in planned(hosting)
    ]
    return check_copies(
        instance_type=instance_type, instance_count=hosting.instance_count, components=components
    )


def specification(hosting: InferenceComponentHosting, model: str) -> InferenceComponentSpecificationTypeDef:
    """Specification of one component: its model, compute requirements, start-up timeout."""
    requirements: InferenceComponentComputeResourceRequirementsTypeDef = {
        "MinMemoryRequiredInMb": hosting.min_memory_mb
    }
    if hosting.accelerator_devices is not None:
        requirements["NumberOfAcceleratorDevicesRequired"] = hosting.accelerator_devices
    if hosting.gpu_partition is not None:
        # Each copy takes one partition; types-boto3-sagemaker 1.43.119 predates the field botocore 1.44 has.
        requirements["NumberOfAcceleratorDevicesRequired"] = 1
        cast("dict[str, Any]", requirements)["AcceleratorPartitionType"] = hosting.gpu_partition
    if hosting.cpu_cores is not None:
        requirements["NumberOfCpuCoresRequired"] = hosting.cpu_cores
    startup: InferenceComponentStartupParametersTypeDef = {
        "ContainerStartupHealthCheckTimeoutInSeconds": hosting.startup_health_check_timeout_s
    }
    if hosting.model_data_download_timeout_s is not None:
        startup["ModelDataDownloadTimeoutInSeconds"] = hosting.model_data_download_timeout_s
    return {"ModelName": model, "ComputeResourceRequirements": requirements, "StartupParameters": startup}


def component_status(described: dict[str, Any]) -> ComponentStatus:
    runtime = described.get("RuntimeConfig") or {}
    return ComponentStatus(
        name=described["InferenceComponentName"],
        status=described.get("InferenceComponentStatus", "Unknown"),
        desired_copies=runtime.get("DesiredCopyCount"),
        current_copies=runtime.get("CurrentCopyCount"),
        failure_reason=described.get("FailureReason"),
    )


def check_component(component: ComponentStatus, endpoint: str, instance_type: str | None = None) -> bool:
    """True when the component serves every copy it asked for.

    The error names the endpoint's instance type: with it, a diagnosis of the message alone can tell copies short of
    devices (F09) from copies short of memory (F10).

    Raises:
        InferenceComponentFailed: Failed (its FailureReason quoted), or InService short of copies (F09).
    """
    where = f"{endpoint} ({instance_type})" if instance_type else endpoint
    if component.status == FAILED:
        raise InferenceComponentFailed(
            f"inference component {component.name} on {where} is Failed: FailureReason: "
            f"{component.failure_reason or '(empty)'}"
        )
    if component.status != IN_SERVICE:
        return False
    desired, current = component.desired_copies or 0, component.current_copies or 0
    if current < desired:
        raise InferenceComponentFailed(
            f"inference component {component.name} on {where} is InService with CurrentCopyCount {current} of "
            f"DesiredCopyCount {desired}: SageMaker was able to deploy {current} out of {desired} requested "
            "copies (F09: each copy needs whole accelerator devices).",
            fix="use more GPUs (ml.g6.12xlarge has 4), fewer copies, or LMI for several models on one GPU",
        )
    return True


def _placement(context: PreflightContext, hosting: InferenceComponentHosting) -> list[Finding]:
    return each_instance_type(
        hosting.instance_type_fallbacks, lambda instance_type: placement_findings(hosting, instance_type)
    )


def _copies_per_instance(hosting: InferenceComponentHosting) -> int:
    return containers_per_instance(sum(copies for _, _, copies in planned(hosting)), hosting.instance_count)


COMPONENT_CHECKS: tuple[Check[InferenceComponentHosting], ...] = (
    INSTANCE_TYPES,
    Check("accelerator devices on GPU, copies x devices vs GPUs", ("F08", "F09"), _placement),
    Check(
        "copies x workers vs instance memory",
        ("F02", "F07"),
        memory_check(_copies_per_instance),
        ("model_size",),
    ),
    Check("image CUDA vs the instance's GPU driver", ("F20",), cuda_check(hf_image)),
    STARTUP_TIMEOUT,
    DOWNLOAD_TIMEOUT,
    *ONNX_ARTIFACT_CHECKS,
)
"""The checks of every mode on inference components (scale to zero adds its own)."""


class ComponentsMode(InstanceMode[ComponentsT]):
    """An endpoint without a model, one model and one inference component per planned model."""

    uses_components = True

    def plan(
        self,
        request: DeployRequest,
        hosting: ComponentsT,
        instance_type: str,
        *,
        clients: AwsClients,
        settings: Settings,
    ) -> Planned[ComponentsT]:
        """One model per component (the components themselves are placed once InService)."""
        refuse_blocking(placement_findings(hosting, instance_type), mode=self.mode)
        image = hf_image(hosting, instance_type, settings.region)
        listed = planned(hosting)
        models = [
            {"PrimaryContainer": hf_container(image, data_uri or request.pack.model_data_uri, hosting)}
            for _, data_uri, _ in listed
        ]
        attempt = request.attempt.number
        components = [naming.inference_component_name(request.run_id, attempt, i) for i in range(len(listed))]
        targets = {
            name: {"InferenceComponentName": component}
            for (name, _, _), component in zip(listed, components, strict=True)
        }
        return Planned(
            hosting,
            models=models,
            recorded={"target": targets[MAIN_MODEL], "targets": targets, "inference_components": components},
        )

    def variant(self, hosting: ComponentsT, *, instance_type: str, models: list[str]) -> dict[str, Any]:
        """No model on the variant (the components carry them), ManagedInstanceScaling."""
        variant = instance_variant(hosting, instance_type=instance_type, model=None)
        # Set per component instead: the variant has no model of its own to download or health-check.
        variant.pop("ContainerStartupHealthCheckTimeoutInSeconds")
        variant.pop("ModelDataDownloadTimeoutInSeconds", None)
        variant["ManagedInstanceScaling"] = {
            "Status": "ENABLED",
            "MinInstanceCount": hosting.min_instance_count,
            "MaxInstanceCount": hosting.max_instance_count,
        }
        variant["RoutingConfig"] = {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"}
        if hosting.gpu_partition is not None:
            layout = layout_for(instance_type, hosting.gpu_partition, hosting.partitions_per_gpu)
            # Exactly one layout, applied by SageMaker to every GPU of every instance.
            variant["AcceleratorPartitionLayouts"] = [{"AcceleratorPartitionTypes": layout.types()}]
        return variant

    def endpoint_config_extra(self, settings: Settings) -> dict[str, Any]:
        # An endpoint that hosts inference components runs them with this role.
        return {"ExecutionRoleArn": settings.sagemaker_role_arn}

    def place(self, request: DescribeRequest, *, clients: AwsClients) -> Progress:
        """Create the components that do not exist yet; report each one's status and copies."""
        deploy = request.deploy
        hosting = self.recorded_hosting(request)
        copies = [c for _, _, c in planned(hosting)]
        statuses: list[ComponentStatus] = []
        ready = True
        for index, name in enumerate(deploy.inference_components):
            described = self._describe(clients.sagemaker, name)
            if described is None:
                self._create(request, name, deploy.model_names[index], copies[index], hosting, clients)
                statuses.append(ComponentStatus(name=name, status="Creating", desired_copies=copies[index]))
                ready = False
                continue
            status = component_status(described)
            statuses.append(status)
            ready = check_component(status, deploy.endpoint_name, deploy.instance_type) and ready
        return Progress(ready=ready, phase="ready" if ready else "components", components=statuses)

    def advance(self, request: DescribeRequest, *, clients: AwsClients) -> Progress:
        return self.place(request, clients=clients)

    @staticmethod
    def _describe(sagemaker: SageMakerClient, name: str) -> dict[str, Any] | None:
        from botocore.exceptions import ClientError

        try:
            return dict(sagemaker.describe_inference_component(InferenceComponentName=name))
        except ClientError as error:
            if is_not_found(error):
                return None
            raise translate(error, f"describe inference component {name}") from error

    @staticmethod
    def _create(
        request: DescribeRequest,
        name: str,
        model: str,
        copies: int,
        hosting: InferenceComponentHosting,
        clients: AwsClients,
    ) -> None:
        with aws_errors(f"create inference component {name}"):
            clients.sagemaker.create_inference_component(
                InferenceComponentName=name,
                EndpointName=request.deploy.endpoint_name,
                VariantName=VARIANT,
                Specification=specification(hosting, model),
                RuntimeConfig={"CopyCount": copies},
                Tags=naming.tags(request.run_id, request.spec),
            )


class InferenceComponentMode(ComponentsMode[InferenceComponentHosting]):
    mode = "inference-component"
    spec_type = InferenceComponentHosting
    checks = (*COMPONENT_CHECKS, POOLS, GPU_RUNTIME)


STRATEGY = InferenceComponentMode()
