"""A sweep's two arms of a whole GPU against its partitions: the same instance type and price, run
once with one component copy per whole GPU and once with one copy per GPU partition (MIG).

The sweep file asks for it with ``partitions: {instance_type: ml.p4d.24xlarge, gpu_partition:
mig-1g.5gb}``; the two arms become the sweep's hosting axis (models and shapes still cross with
them). A type without partitions, a partition type its family does not offer, or a layout that does
not fit one GPU is refused when the sweep is loaded, with preflight's own message and fix
(``workflows.preflight.partitions``: one table, one wording).
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import Field

from workflows.errors import SpecInvalid
from workflows.models import Strict
from workflows.preflight.instances import instance
from workflows.preflight.partitions import check_partitions, layout_for

Arm = Literal["whole GPUs", "partitions"]
WHOLE: Final = "whole GPUs"
PARTITIONED: Final = "partitions"
PER_GPU = " per GPU"
"""Ends the key suffix of a partitioned run (``· 7 x mig-1g.5gb per GPU``)."""


class PartitionComparison(Strict):
    """Whole GPUs against their partitions on one MIG-capable instance type, at the same hourly price."""

    instance_type: str = Field(
        ...,
        description="A MIG-capable type (workflows/data/gpu_partitions.yaml), e.g. ml.p4d.24xlarge or ml.p5.48xlarge.",
    )
    gpu_partition: str = Field(
        ...,
        pattern=r"^mig-[0-9]+g\.[0-9]+gb$",
        description="The partition type of the partitioned arm, e.g. mig-1g.5gb on ml.p4d.",
    )
    partitions_per_gpu: int | None = Field(
        None, ge=1, le=7, description="Partitions carved on each GPU; empty: as many as fit one."
    )
    instance_count: int = Field(1, ge=1, le=10, description="Instances of both arms.")
    batch_size: int = Field(1, ge=1, le=4096, description="The batch size judged (one the shapes measure).")
    sequence_length: int | Literal["natural"] | None = Field(
        None, description="The sequence length judged; empty: every measured one (the slowest counts)."
    )
    p99_ms: float | None = Field(
        None, gt=0, le=600_000, description="A point counts only where its p99 is at most this; empty: any."
    )


def refusal(comparison: PartitionComparison) -> SpecInvalid | None:
    """Preflight's refusal of the partitioned arm, as the sweep's error (None: the layout is valid)."""
    findings = check_partitions(
        instance_type=comparison.instance_type,
        partition_type=comparison.gpu_partition,
        per_gpu=comparison.partitions_per_gpu,
        instance_count=comparison.instance_count,
        copies=1,
        fields="partitions",
    )
    if not findings:
        return None
    finding = findings[0]
    return SpecInvalid(f"partitions: {finding.message}", fix=finding.fix or "")


def gpus(comparison: PartitionComparison) -> int:
    """GPUs of one instance of the comparison's type (the instance table's count)."""
    row = instance(comparison.instance_type)
    return row.gpus if row is not None else 0


def hosting_arms(comparison: PartitionComparison) -> list[tuple[Arm, dict[str, Any]]]:
    """The two hosting entries: one copy per whole GPU, and one copy per partition of the layout.

    Raises:
        SpecInvalid: the type has no partitions or the layout does not fit (preflight's message and fix).
    """
    refused = refusal(comparison)
    if refused is not None:
        raise refused
    count = comparison.instance_count
    per_instance = gpus(comparison)
    if not per_instance:
        raise SpecInvalid(
            f"partitions: {comparison.instance_type} has no GPU count in the instance table.",
            fix="add its row to workflows/data/instances.yaml, or choose a listed MIG-capable type",
        )
    layout = layout_for(comparison.instance_type, comparison.gpu_partition, comparison.partitions_per_gpu)
    shared = {
        "mode": "inference-component",
        "instance_type_fallbacks": [comparison.instance_type],
        "instance_count": count,
        "min_instance_count": count,
        "max_instance_count": count,
    }
    whole: dict[str, Any] = {**shared, "accelerator_devices": 1, "copies": per_instance * count}
    partitioned: dict[str, Any] = {
        **shared,
        "gpu_partition": layout.partition_type,
        "partitions_per_gpu": layout.count,
        "copies": layout.count * per_instance * count,
    }
    return [(WHOLE, whole), (PARTITIONED, partitioned)]


def key_suffix(hosting: Any) -> str:
    """What tells a partitioned run's key from the whole-GPU run's ('' for a run without partitions)."""
    partition = getattr(hosting, "gpu_partition", None)
    if partition is None:
        return ""
    instance_type = (getattr(hosting, "instance_type_fallbacks", None) or [""])[0]
    layout = layout_for(instance_type, partition, getattr(hosting, "partitions_per_gpu", None))
    return f" · {layout.count} x {partition}{PER_GPU}"


def arm_of(hosting: Any) -> Arm:
    """Which arm a run's hosting is."""
    return PARTITIONED if getattr(hosting, "gpu_partition", None) is not None else WHOLE
