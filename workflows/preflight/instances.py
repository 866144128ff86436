"""The instance table (``workflows/data/instances.yaml``): vCPUs, memory and accelerators."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Any

import yaml

from workflows.contracts import Finding
from workflows.spec import is_gpu_instance

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


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    return yaml.safe_load((files("workflows") / "data" / "instances.yaml").read_text(encoding="utf-8"))


def table_date() -> str:
    return str(_table()["checked"])


@lru_cache(maxsize=256)
def instance(name: str) -> Instance | None:
    """``ml.c6i.2xlarge`` -> its row, or None when the table does not list it."""
    parts = name.split(".")
    if len(parts) != 3 or parts[0] != "ml":
        return None
    family = _table()["families"].get(parts[1])
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
    return [f"ml.{family}.{size}" for family, row in _table()["families"].items() for size in row["sizes"]]


def check_instance_types(instance_types: list[str]) -> list[Finding]:
    """Instance-type sanity: every type is in the table (a typo or an unknown size fails only at
    CreateEndpointConfig, minutes into a run), and the spec's own GPU list agrees with the table."""
    findings = []
    for name in instance_types:
        row = instance(name)
        if row is None:
            findings.append(
                Finding(
                    id="instance-type",
                    severity="warning",
                    message=f"{name} is not in the instance table (checked {table_date()}); its memory and "
                    "accelerators cannot be verified, and a misspelt type fails only at CreateEndpointConfig.",
                    fix="check the name against the SageMaker instance list, or add the type to "
                    "workflows/data/instances.yaml with its source",
                    evidence=name,
                )
            )
        elif (row.accelerators > 0) != is_gpu_instance(name):
            findings.append(
                Finding(
                    id="instance-type",
                    severity="warning",
                    message=f"{name}: the instance table and workflows.spec.GPU_FAMILIES disagree on whether "
                    "it has accelerators; image choice and GPU checks may be wrong.",
                    fix="make GPU_FAMILIES and workflows/data/instances.yaml agree",
                    evidence=f"table accelerators={row.accelerators}",
                )
            )
    return findings
