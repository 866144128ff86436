"""What accelerator an instance type carries, read from ``data/instances.yaml``.

SageMaker's accelerator families are not all CUDA GPUs: ``inf1``/``inf2`` (Inferentia) and
``trn1``/``trn1n``/``trn2`` (Trainium) run AWS Neuron, ``dl1`` runs Habana Gaudi. An image built for
CUDA does not start on them, and their devices are not GPUs for placement (F08/F09) or drivers
(F20). One table says which family has which kind; everything else asks here.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib.resources import files
from typing import Any, Literal

import yaml

GPU = "gpu"
"""NVIDIA GPUs: CUDA images, driver checks (F20), whole devices per component (F08)."""
NEURON = "neuron"
GAUDI = "gaudi"
ACCELERATOR_KINDS = (GPU, NEURON, GAUDI)

Device = Literal["cpu", "gpu", "neuron", "gaudi"]


@lru_cache(maxsize=1)
def instance_table() -> dict[str, Any]:
    """The parsed ``workflows/data/instances.yaml``."""
    return yaml.safe_load((files("workflows") / "data" / "instances.yaml").read_text(encoding="utf-8"))


def family_of(instance_type: str) -> str:
    """``ml.p6-b200.48xlarge`` -> ``p6-b200``; empty for a name that is not ``ml.<family>.<size>``."""
    parts = instance_type.split(".")
    return parts[1] if len(parts) == 3 and parts[0] == "ml" else ""


_GRAVITON = re.compile(r"^[a-z]+\d+g[a-z]*$")
"""AWS Graviton (arm64) families: the generation digit is followed by ``g`` (c6g, c6gd, m7g, r8g)."""
ARM64_ACCELERATED = frozenset({"p6e-gb200"})
"""Accelerated families whose host CPU is Arm (Grace, in the GB200 superchip)."""


def is_arm64(instance_type: str) -> bool:
    """Whether the instance type's CPU is arm64 (Graviton, or Grace in ``p6e-gb200``)."""
    family = family_of(instance_type)
    return bool(_GRAVITON.match(family)) or family in ARM64_ACCELERATED


def accelerator_kind(instance_type: str) -> str | None:
    """``gpu``, ``neuron`` or ``gaudi`` for an accelerator family; None for CPU (or unknown) families."""
    family = (instance_table()["families"].get(family_of(instance_type)) or {}).get("accelerator") or {}
    kind = family.get("kind")
    return str(kind) if kind else None


def device_of(instance_type: str) -> Device:
    """The device an image must be built for on this instance type."""
    kind = accelerator_kind(instance_type)
    if kind == GPU:
        return "gpu"
    if kind == NEURON:
        return "neuron"
    if kind == GAUDI:
        return "gaudi"
    return "cpu"


def is_gpu_instance(instance_type: str) -> bool:
    """True for NVIDIA GPU families (``ml.g5.xlarge``, ``ml.p5en.48xlarge``); False for CPU, Neuron
    (``ml.inf2.xlarge``, ``ml.trn1.2xlarge``) and Gaudi instances."""
    return accelerator_kind(instance_type) == GPU
