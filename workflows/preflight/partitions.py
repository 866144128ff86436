"""GPU partitions (MIG) for inference components: the per-family table and the layout checks.

An endpoint config's variant declares one ``AcceleratorPartitionLayouts`` entry, applied to every GPU
of every instance; each component copy occupies one partition (``AcceleratorPartitionType`` with
``NumberOfAcceleratorDevicesRequired`` 1). SageMaker answers a layout that does not fit one GPU, or a
type the GPU does not offer, with a 400 naming the valid types; these checks say the same before
anything is created. The table is ``workflows/data/gpu_partitions.yaml`` (its source is in the file).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Any

import yaml

from workflows.contracts import Finding
from workflows.images.accelerators import family_of
from workflows.preflight.instances import instance

PARTITION = "gpu-partition"
"""The finding id of every refusal here (no field failure yet: SageMaker's own 400s, said earlier)."""


@lru_cache(maxsize=1)
def partition_table() -> dict[str, Any]:
    """The parsed ``workflows/data/gpu_partitions.yaml``."""
    return yaml.safe_load((files("workflows") / "data" / "gpu_partitions.yaml").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Layout:
    """``count`` partitions of ``partition_type`` on each GPU."""

    partition_type: str
    count: int

    def types(self) -> list[str]:
        """``AcceleratorPartitionTypes`` of the one layout: the type repeated once per partition."""
        return [self.partition_type] * self.count


def family_types(instance_type: str) -> dict[str, tuple[int, int]]:
    """The partition types ``instance_type``'s family offers, with their (compute, memory) slices; empty
    for a family without MIG."""
    family = partition_table()["families"].get(family_of(instance_type)) or {}
    return {name: (int(s[0]), int(s[1])) for name, s in (family.get("types") or {}).items()}


def most_that_fit(instance_type: str, partition_type: str) -> int:
    """How many partitions of ``partition_type`` one GPU of the family holds (0: not offered)."""
    slices = family_types(instance_type).get(partition_type)
    if slices is None:
        return 0
    limits = partition_table()["gpu_slices"]
    return min(int(limits["compute"]) // slices[0], int(limits["memory"]) // slices[1])


def layout_for(instance_type: str, partition_type: str, per_gpu: int | None) -> Layout:
    """The layout sent: ``per_gpu`` partitions, or as many as fit one GPU when not given."""
    return Layout(partition_type, per_gpu or max(1, most_that_fit(instance_type, partition_type)))


def _offered() -> str:
    """Every MIG family and its types, for a refusal on a family without MIG."""
    return "; ".join(
        f"ml.{family}.* ({row['gpu']}): {', '.join(row['types'])}"
        for family, row in partition_table()["families"].items()
    )


def _refusal(message: str, fix: str, evidence: str) -> list[Finding]:
    return [
        Finding(
            id=PARTITION,
            severity="blocking",
            message=message,
            fix=fix,
            evidence=evidence + f" (table: {partition_table()['source']})",
        )
    ]


def check_partitions(
    *,
    instance_type: str,
    partition_type: str,
    per_gpu: int | None,
    instance_count: int,
    copies: int,
    fields: str = "hosting",
) -> list[Finding]:
    """A partitioned layout that SageMaker would refuse, said before anything is created: a family
    without MIG (g5), a type the family does not offer, a layout that does not fit one GPU, or more
    copies than the partitions of all instances. ``fields`` is where the spec holds ``gpu_partition``
    and ``partitions_per_gpu`` (a sweep's comparison holds them under ``partitions``)."""
    row = instance(instance_type)
    types = family_types(instance_type)
    if not types:
        gpu = f" ({row.accelerator_name})" if row is not None and row.accelerator_name else ""
        return _refusal(
            f"{instance_type}{gpu} offers no GPU partitions, so {fields}.gpu_partition {partition_type} cannot "
            f"be placed: MIG is offered on {_offered()}.",
            f"choose a MIG-capable instance type and one of its partition types, or drop {fields}.gpu_partition "
            "to give each copy whole GPUs",
            f"{instance_type}, gpu_partition {partition_type}",
        )
    if partition_type not in types:
        return _refusal(
            f"{instance_type} does not offer partition type {partition_type}: SageMaker answers 400 listing "
            f"the valid types, which for ml.{family_of(instance_type)} are {', '.join(types)}.",
            f"set {fields}.gpu_partition to one of {', '.join(types)}",
            f"{instance_type}, gpu_partition {partition_type}",
        )
    most = most_that_fit(instance_type, partition_type)
    layout = layout_for(instance_type, partition_type, per_gpu)
    if layout.count > most:
        compute, memory = types[partition_type]
        limits = partition_table()["gpu_slices"]
        return _refusal(
            f"{layout.count} x {partition_type} do not fit one GPU of {instance_type}: they need "
            f"{layout.count * compute} compute and {layout.count * memory} memory slices of its "
            f"{limits['compute']} and {limits['memory']}; at most {most} fit.",
            f"set {fields}.partitions_per_gpu to {most} or less, or choose a smaller type of "
            f"{', '.join(types)}",
            f"{instance_type}, {layout.count} x {partition_type}",
        )
    gpus = row.gpus if row is not None else 0
    available = layout.count * gpus * instance_count
    if gpus and copies > available:
        return _refusal(
            f"{copies} component copies need {copies} partitions but {instance_count} x {instance_type} "
            f"holds {available} ({layout.count} x {partition_type} on each of {gpus} GPU(s) per instance).",
            "use fewer copies, more instances, or more partitions per GPU",
            f"{copies} copies, {available} partitions",
        )
    return []
