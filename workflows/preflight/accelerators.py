"""Accelerator placement: Direct mode on GPU (F04), devices per component (F08), copies (F09)."""

from __future__ import annotations

from dataclasses import dataclass

from workflows.contracts import Finding
from workflows.preflight.instances import instance
from workflows.spec.pipeline import is_gpu_instance


def check_direct_mode(*, instance_type: str, execution_mode: str, containers: int) -> list[Finding]:
    """F04: multi-container Direct mode rejects GPU instances (g5.xlarge, g5.2xlarge, g4dn.xlarge
    rejected, c6i.2xlarge accepted); Serial accepts them but is a pipeline, not a co-host."""
    if containers < 2 or execution_mode != "Direct" or not is_gpu_instance(instance_type):
        return []
    return [
        Finding(
            id="F04",
            severity="blocking",
            message=f"{instance_type} is a GPU instance and {containers} containers run in Direct mode: "
            "CreateEndpoint answers 'Instance type ... is not supported for a Model using Direct "
            "InferenceExecutionMode'.",
            fix="use a CPU instance for Direct co-hosting, or LMI to co-host several models on a GPU",
            evidence=f"{instance_type}, InferenceExecutionConfig.Mode=Direct, {containers} containers",
        )
    ]


def check_accelerator_devices(*, instance_type: str, devices: float | None) -> list[Finding]:
    """F08: a GPU inference component needs NumberOfAcceleratorDevicesRequired, a whole number >= 1."""
    if not is_gpu_instance(instance_type):
        return []
    if devices is None:
        return [
            Finding(
                id="F08",
                severity="blocking",
                message=f"an inference component on {instance_type} without NumberOfAcceleratorDevicesRequired "
                f"is rejected: 'Number of accelerator devices required must be specified for {instance_type}'.",
                fix="set ComputeResourceRequirements.NumberOfAcceleratorDevicesRequired to 1 or more",
                evidence=f"{instance_type}, devices unset",
            )
        ]
    if devices < 1 or devices != int(devices):
        return [
            Finding(
                id="F08",
                severity="blocking",
                message=f"NumberOfAcceleratorDevicesRequired={devices}: the minimum is one whole device "
                "(0.5 is a ParamValidationError).",
                fix="use a whole number of devices, at least 1; several models per GPU need LMI",
                evidence=str(devices),
            )
        ]
    return []


@dataclass(frozen=True)
class ComponentPlacement:
    """One inference component: its copies and the devices each copy takes."""

    name: str
    copies: int
    devices: int


def check_copies(
    *, instance_type: str, instance_count: int, components: list[ComponentPlacement]
) -> list[Finding]:
    """F09: the copies of all components x their devices fit the GPUs of all instances.

    Memory does not matter here: 3 models of 1.9 GB fp16 in all still placed one copy on one GPU.
    """
    row = instance(instance_type)
    if row is None or not is_gpu_instance(instance_type):
        return []
    wanted = sum(c.copies * c.devices for c in components)
    available = row.gpus * instance_count
    if wanted <= available:
        return []
    listed = ", ".join(f"{c.name}: {c.copies} x {c.devices}" for c in components)
    return [
        Finding(
            id="F09",
            severity="blocking",
            message=f"copies x devices = {wanted} but {instance_count} x {instance_type} has {available} GPU(s): "
            "SageMaker places what fits ('able to deploy 0 out of 1 requested copies', or InService with "
            "current < desired copies).",
            fix="use more GPUs (ml.g6.12xlarge has 4), fewer copies, or LMI for several models on one GPU",
            evidence=listed,
        )
    ]
