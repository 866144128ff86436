"""The instance table (``workflows/data/instances.yaml``): vCPUs, memory and accelerators."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from workflows.contracts import Finding
from workflows.images.accelerators import GPU, family_of, instance_table, is_arm64

GIB_MB = 1024


@dataclass(frozen=True)
class Instance:
    name: str
    family: str
    vcpus: int
    memory_gib: int
    accelerators: int = 0
    accelerator_name: str | None = None
    accelerator_memory_gib: int | None = None
    accelerator_kind: str | None = None
    default_driver: int | None = None

    @property
    def memory_mb(self) -> int:
        return self.memory_gib * GIB_MB

    @property
    def gpus(self) -> int:
        return self.accelerators if self.accelerator_kind == "gpu" else 0


def table_date() -> str:
    return str(instance_table()["checked"])


@lru_cache(maxsize=256)
def instance(name: str) -> Instance | None:
    """``ml.c6i.2xlarge`` -> its row, or None when the table does not list it."""
    parts = name.split(".")
    if len(parts) != 3 or parts[0] != "ml":
        return None
    family = instance_table()["families"].get(parts[1])
    if family is None or parts[2] not in family["sizes"]:
        return None
    row = family["sizes"][parts[2]]
    accelerator = family.get("accelerator") or {}
    return Instance(
        name=name,
        family=parts[1],
        vcpus=row[0],
        memory_gib=row[1],
        accelerators=row[2] if len(row) > 2 else 0,
        accelerator_name=accelerator.get("name"),
        accelerator_memory_gib=accelerator.get("memory_gib"),
        accelerator_kind=accelerator.get("kind"),
        default_driver=accelerator.get("default_driver"),
    )


def known_instances() -> list[str]:
    return [
        f"ml.{family}.{size}" for family, row in instance_table()["families"].items() for size in row["sizes"]
    ]


def check_instance_types(instance_types: list[str], *, image: str | None = None) -> list[Finding]:
    """Instance-type sanity: every type is in the table (a typo or an unknown size fails only at
    CreateEndpointConfig, minutes into a run), and no type carries accelerators the mode's images
    cannot use (Neuron, Gaudi: the images deploybench picks are built for CPUs and CUDA GPUs).

    Args:
        image: the spec's own image (``hosting.image``); with one, a Neuron instance is the user's call.
    """
    findings = []
    for position, name in enumerate(instance_types):
        row = instance(name)
        family = (instance_table()["families"].get(family_of(name)) or {}).get("accelerator") or {}
        kind = family.get("kind")
        # Only the first type is what the run deploys: a fallback that cannot serve is a warning.
        unservable = "blocking" if position == 0 else "warning"
        if is_arm64(name) and image is None:
            findings.append(
                _instance_finding(
                    unservable,
                    f"{name} has an arm64 CPU (AWS Graviton, or Grace): the images deploybench picks "
                    "(workflows/data/images.yaml) and the artifact's onnxruntime wheel are built for x86_64, "
                    "so the container would fail with an exec format error.",
                    fix="use an x86_64 instance type (ml.c7i, ml.m7i, ml.c6i), or set hosting.image to an "
                    "image built for linux/arm64",
                    evidence=f"{name}: arm64",
                )
            )
        elif kind and kind != GPU and image is None:
            findings.append(
                _instance_finding(
                    unservable,
                    f"{name} carries {family.get('name')} accelerators ({kind}), not CUDA GPUs: the "
                    "images deploybench picks (workflows/data/images.yaml) are built for CPUs and NVIDIA GPUs "
                    "and do not run there.",
                    fix="use a GPU (ml.g5, ml.g6, ml.p5...) or CPU instance type, or set hosting.image to an "
                    "image built for this accelerator (a Neuron DLC)",
                    evidence=f"{name}: accelerator kind {kind}",
                )
            )
        elif row is None:
            findings.append(
                _instance_finding(
                    "warning",
                    f"{name} is not in the instance table (checked {table_date()}); its memory and "
                    "accelerators cannot be verified, and a misspelt type fails only at CreateEndpointConfig.",
                    fix="check the name against the SageMaker instance list, or add the type to "
                    "workflows/data/instances.yaml with its source",
                    evidence=name,
                )
            )
    return findings


def _instance_finding(severity: str, message: str, *, fix: str, evidence: str) -> Finding:
    return Finding(id="instance-type", severity=severity, message=message, fix=fix, evidence=evidence)
