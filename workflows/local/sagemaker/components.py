"""Inference components: models placed as copies on an endpoint's instances, each copy a container.

Creating -> InService (CurrentCopyCount = the copies placed) or Failed with a FailureReason;
UpdateInferenceComponentRuntimeConfig moves the copy count (Updating -> InService); at zero copies
an invocation fails at once with the field's "no capacity" error (F12). The local machine has no
GPUs, so accelerator placement (F08, F09) and memory placement (F10) happen as in the field only
when the fault plan asks for them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from workflows import clock
from workflows.local.sagemaker.api import already_exists, constraint, epoch, not_found, valid_name, validation
from workflows.local.sagemaker.container import Container, ContainerFailed
from workflows.local.sagemaker.container_spec import ContainerSpec
from workflows.local.sagemaker.endpoints import EndpointsApi
from workflows.local.sagemaker.instances import gpus
from workflows.local.sagemaker.logs import instance_id
from workflows.local.sagemaker.models import model_containers
from workflows.local.sagemaker.partitions import check_partition
from workflows.local.sagemaker.startup import DEFAULT_HEALTH_CHECK_TIMEOUT_S
from workflows.local.sagemaker.state import Instance
from workflows.spec.pipeline import is_gpu_instance

IC_LOG_GROUP = "/aws/sagemaker/InferenceComponents/{name}"
NO_CAPACITY = "Inference Component has no capacity to process this request"


@dataclass
class InferenceComponent:
    name: str
    arn: str
    endpoint: str
    variant: str
    specification: dict[str, Any]
    desired: int
    status: str
    created: datetime
    modified: datetime
    failure_reason: str | None = None
    copies: list[Instance] = field(default_factory=list)
    turn: int = 0

    @property
    def devices(self) -> int:
        requirements = self.specification.get("ComputeResourceRequirements") or {}
        return int(requirements.get("NumberOfAcceleratorDevicesRequired") or 1)


class ComponentsApi(EndpointsApi):
    def create_inference_component(self, body: dict[str, Any]) -> dict[str, Any]:
        name = valid_name(body, "InferenceComponentName")
        endpoint = self._endpoint(body.get("EndpointName", ""))
        config = self.configs.get(endpoint.config_name) or {"ProductionVariants": [{}]}
        variant = config["ProductionVariants"][0]
        if endpoint.kind != "components":
            raise validation(
                f"Endpoint {endpoint.name} hosts a model in its endpoint config; inference components need an "
                "endpoint config whose production variant names no model."
            )
        if body.get("VariantName") != variant.get("VariantName"):
            raise validation(f"Variant {body.get('VariantName')} does not exist on endpoint {endpoint.name}.")
        specification = dict(body.get("Specification") or {})
        self._check_specification(specification, endpoint.instance_type(variant))
        check_partition(specification, variant)
        copies = (body.get("RuntimeConfig") or {}).get("CopyCount")
        if not isinstance(copies, int) or copies < 0:
            raise constraint(
                copies, "runtimeConfig.copyCount", "Member must have value greater than or equal to 0"
            )
        now = clock.now()
        with self.lock:
            if name in self.components:
                raise already_exists("inference component", self.arn("inference-component", name))
            component = InferenceComponent(
                name, self.arn("inference-component", name), endpoint.name, variant["VariantName"],
                specification, copies, "Creating", now, now,
            )  # fmt: skip
            self.components[name] = component
            self.tags[component.arn] = list(body.get("Tags") or [])
        self.spawn(self._place, component, variant, name=f"component-{name}")
        return {"InferenceComponentArn": component.arn}

    def _check_specification(self, specification: dict[str, Any], instance_type: str) -> None:
        model = specification.get("ModelName")
        if model is None and not specification.get("Container"):
            raise validation("Specification needs a ModelName or a Container.")
        if model is not None and model not in self.models:
            raise not_found("model", self.arn("model", model))
        requirements = specification.get("ComputeResourceRequirements") or {}
        if not isinstance(requirements.get("MinMemoryRequiredInMb"), int):
            raise validation("Specification.ComputeResourceRequirements.MinMemoryRequiredInMb is required.")
        devices = requirements.get("NumberOfAcceleratorDevicesRequired")
        if devices is not None and devices < 1:
            rule = "Member must have value greater than or equal to 1"
            raise constraint(
                devices, "specification.computeResourceRequirements.numberOfAcceleratorDevicesRequired", rule
            )
        if is_gpu_instance(instance_type) and devices is None and self.planned_fault("F08", instance_type):
            raise validation(f"Number of accelerator devices required must be specified for {instance_type}")

    # --- placement -----------------------------------------------------------------------------

    def _placeable(self, component: InferenceComponent, instance_type: str, instances: int) -> int:
        """F09: copies beyond the instances' GPUs are not placed (each copy takes whole devices)."""
        if not is_gpu_instance(instance_type) or self.fault_plan.find("F09", instance_type) is None:
            return component.desired
        with self.lock:
            used = sum(len(c.copies) * c.devices for c in self.components.values() if c is not component)
        free = gpus(instance_type) * instances - used
        placeable = max(0, free) // component.devices
        if placeable < component.desired and self.planned_fault("F09", instance_type):
            return placeable
        return component.desired

    def _place(self, component: InferenceComponent, variant: dict[str, Any]) -> None:
        instance_type = self._endpoint(component.endpoint).instance_type(variant)
        requirements = component.specification.get("ComputeResourceRequirements") or {}
        memory = self.fault_plan.find("F10", instance_type)
        if (
            memory is not None
            and requirements["MinMemoryRequiredInMb"] > memory.memory_limit_mb
            and self.planned_fault("F10", instance_type)
        ):
            self._fail(component, "There is not enough memory available for this Inference Component")
            return
        target = self._placeable(component, instance_type, variant.get("InitialInstanceCount", 1))
        if target == 0 and component.desired > 0:
            self._fail(
                component, f"SageMaker was able to deploy 0 out of {component.desired} requested copies"
            )
            return
        try:
            self._scale_to(component, target)
        except ContainerFailed as error:
            self._fail(component, str(error))
            return
        with self.lock:
            if component.status in {"Creating", "Updating"}:
                component.status, component.modified = "InService", clock.now()

    def _fail(self, component: InferenceComponent, reason: str) -> None:
        with self.lock:
            component.status, component.failure_reason, component.modified = "Failed", reason, clock.now()

    def _scale_to(self, component: InferenceComponent, copies: int) -> None:
        while len(component.copies) > copies:
            with self.lock:
                copy = component.copies.pop()
            for container in copy.containers.values():
                container.stop()
        started: list[Instance] = []
        for index in range(len(component.copies), copies):
            started.append(self._start_copy(component, index))
        try:
            for copy in started:
                for container in copy.containers.values():
                    container.wait_healthy(DEFAULT_HEALTH_CHECK_TIMEOUT_S, primary=False)
        except ContainerFailed:
            for copy in started:
                for container in copy.containers.values():
                    container.stop()
            raise
        with self.lock:
            component.copies.extend(started)

    def _start_copy(self, component: InferenceComponent, index: int) -> Instance:
        specification = component.specification
        definition: dict[str, Any] = {}
        isolated = False
        if specification.get("ModelName"):
            model = self.models[specification["ModelName"]]
            definition = dict(model_containers(model)[0])
            isolated = bool(model.get("EnableNetworkIsolation"))
        override = specification.get("Container") or {}
        if override.get("ArtifactUrl"):
            definition["ModelDataUrl"] = override["ArtifactUrl"]
        environment = {**(definition.get("Environment") or {}), **(override.get("Environment") or {})}
        copy = Instance(instance_id(component.name, str(index), str(time.monotonic())))
        partition = (specification.get("ComputeResourceRequirements") or {}).get("AcceleratorPartitionType")
        spec = ContainerSpec(
            endpoint=component.endpoint,
            variant=component.variant,
            hostname=component.name,
            environment={str(k): str(v) for k, v in environment.items()},
            log_path=self.log_dir / f"{component.endpoint}-{component.name}-{copy.id}.log",
            log_group=IC_LOG_GROUP.format(name=component.name),
            log_stream=f"{component.name}/{copy.id}",
            isolated=isolated,
            image=str(definition.get("Image", "")),
        )
        if partition:
            spec.extra_log_lines.append(
                f"deploybench local SageMaker: copy {index} of {component.name} stands in for one {partition} GPU "
                "partition: it is a copy on the CPU stand-in, not a slice of a GPU"
            )
        container = self.new_container(spec, self.root / component.endpoint / component.name / copy.id)
        self.place_model_data(container, definition)
        container.launch()
        copy.containers["primary"] = container
        return copy

    # --- describe, update, delete, list --------------------------------------------------------

    def _component(self, name: str) -> InferenceComponent:
        component = self.components.get(name)
        if component is None:
            raise not_found("inference component", self.arn("inference-component", name))
        return component

    def describe_inference_component(self, body: dict[str, Any]) -> dict[str, Any]:
        component = self._component(body["InferenceComponentName"])
        with self.lock:
            result: dict[str, Any] = {
                "InferenceComponentName": component.name,
                "InferenceComponentArn": component.arn,
                "EndpointName": component.endpoint,
                "EndpointArn": self.arn("endpoint", component.endpoint),
                "VariantName": component.variant,
                "Specification": dict(component.specification),
                "RuntimeConfig": {
                    "DesiredCopyCount": component.desired,
                    "CurrentCopyCount": len(component.copies),
                },
                "CreationTime": epoch(component.created),
                "LastModifiedTime": epoch(component.modified),
                "InferenceComponentStatus": component.status,
            }
            if component.failure_reason is not None:
                result["FailureReason"] = component.failure_reason
        return result

    def update_inference_component_runtime_config(self, body: dict[str, Any]) -> dict[str, Any]:
        component = self._component(body["InferenceComponentName"])
        copies = (body.get("DesiredRuntimeConfig") or {}).get("CopyCount")
        if not isinstance(copies, int) or copies < 0:
            raise constraint(
                copies, "desiredRuntimeConfig.copyCount", "Member must have value greater than or equal to 0"
            )
        with self.lock:
            if component.status != "InService":
                raise validation(
                    f'Cannot update inference component "{component.arn}" while it is {component.status}.'
                )
            component.desired, component.status, component.modified = copies, "Updating", clock.now()
        config = self.configs.get(self.endpoints[component.endpoint].config_name) or {
            "ProductionVariants": [{}]
        }
        self.spawn(
            self._place, component, config["ProductionVariants"][0], name=f"component-{component.name}"
        )
        return {"InferenceComponentArn": component.arn}

    def delete_inference_component(self, body: dict[str, Any]) -> dict[str, Any]:
        component = self._component(body["InferenceComponentName"])
        with self.lock:
            if component.status in {"Creating", "Updating"}:
                raise validation(f'Cannot delete in-progress inference component "{component.arn}".')
            component.status = "Deleting"
            copies, component.copies = component.copies, []
        for copy in copies:
            for container in copy.containers.values():
                container.stop()
        with self.lock:
            self.components.pop(component.name, None)
            self.tags.pop(component.arn, None)
        return {}

    def list_inference_components(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            items = [
                {
                    "InferenceComponentName": c.name,
                    "InferenceComponentArn": c.arn,
                    "EndpointName": c.endpoint,
                    "EndpointArn": self.arn("endpoint", c.endpoint),
                    "VariantName": c.variant,
                    "InferenceComponentStatus": c.status,
                    "CreationTime": epoch(c.created),
                    "LastModifiedTime": epoch(c.modified),
                }
                for n, c in sorted(self.components.items())
                if body.get("NameContains", "") in n
                and body.get("EndpointNameEquals", c.endpoint) == c.endpoint
                and body.get("StatusEquals", c.status) == c.status
            ]
        return {"InferenceComponents": items}

    def component_copy(self, name: str) -> Container | None:
        """The container of the next copy in turn, or None at zero copies."""
        component = self._component(name)
        with self.lock:
            if not component.copies:
                return None
            component.turn = (component.turn + 1) % len(component.copies)
            return component.copies[component.turn].containers["primary"]
