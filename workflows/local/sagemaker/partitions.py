"""GPU partitions on the local SageMaker: the rules a partitioned endpoint's components follow.

The local machine has no GPU to partition: each copy on a partition is a copy on the CPU stand-in,
and its log says so. What is checked is what SageMaker checks of the requests (the developer guide's
"Deploy models to GPU partitions with inference components"): on a variant with
``AcceleratorPartitionLayouts`` a component must name a declared ``AcceleratorPartitionType`` with
``NumberOfAcceleratorDevicesRequired`` 1, and without a layout it may name none. The messages are
this engine's own wording of those rules, not SageMaker's text.
"""

from __future__ import annotations

from typing import Any

from workflows.local.sagemaker.api import validation


def declared_types(variant: dict[str, Any]) -> list[str]:
    """The partition types of the variant's layout (empty: the variant is not partitioned)."""
    layouts = variant.get("AcceleratorPartitionLayouts") or []
    return sorted({t for layout in layouts for t in layout.get("AcceleratorPartitionTypes") or []})


def check_partition(specification: dict[str, Any], variant: dict[str, Any]) -> None:
    """Refuse a component that does not fit its endpoint's partition layout, as SageMaker does (400)."""
    requirements = specification.get("ComputeResourceRequirements") or {}
    requested = requirements.get("AcceleratorPartitionType")
    declared = declared_types(variant)
    if not declared:
        if requested:
            raise validation(
                f"AcceleratorPartitionType {requested} needs an endpoint whose production variant declares "
                "AcceleratorPartitionLayouts; this one has none."
            )
        return
    if requested is None:
        raise validation(
            "AcceleratorPartitionType is required on an endpoint with an accelerator partition layout; "
            f"declared types: {', '.join(declared)}."
        )
    if requested not in declared:
        raise validation(
            f"AcceleratorPartitionType {requested} is not declared by the endpoint's partition layout; "
            f"declared types: {', '.join(declared)}."
        )
    if requirements.get("NumberOfAcceleratorDevicesRequired") != 1:
        raise validation(
            "NumberOfAcceleratorDevicesRequired must be 1 with AcceleratorPartitionType: it counts one partition."
        )
