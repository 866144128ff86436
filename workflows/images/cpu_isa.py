"""The matrix instructions of a SageMaker CPU instance type, read from ``data/cpu_isa.yaml``.

OpenVINO's CPU plugin computes in bf16 wherever the CPU has AVX512-BF16 or AMX, and INT8 kernels
are fast only with VNNI or AMX-INT8, so which artifact is fastest at a given accuracy depends on the
instance type's processor: Ice Lake (c6i) has VNNI and no bf16, Sapphire Rapids (c7i) has AMX. One
table says which family has what; SageMaker endpoints offer no AMD family (no ml.c7a, ml.m7a).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Any

import yaml

from workflows.images.accelerators import family_of


@dataclass(frozen=True)
class CpuIsa:
    """What a CPU family's processor offers for INT8 and bf16 matrix products."""

    family: str
    processor: str
    vnni: bool
    avx512_bf16: bool
    amx: bool

    @property
    def bf16(self) -> bool:
        """Whether OpenVINO computes in bf16 there by default (AVX512-BF16 or AMX-BF16)."""
        return self.avx512_bf16 or self.amx


@lru_cache(maxsize=1)
def isa_table() -> dict[str, Any]:
    """The parsed ``workflows/data/cpu_isa.yaml``."""
    return yaml.safe_load((files("workflows") / "data" / "cpu_isa.yaml").read_text(encoding="utf-8"))


def cpu_isa(instance_type: str) -> CpuIsa | None:
    """The ISA of ``ml.<family>.<size>``'s processor; None for a family the table does not list."""
    family = family_of(instance_type)
    row = (isa_table().get("families") or {}).get(family)
    if row is None:
        return None
    return CpuIsa(
        family=family,
        processor=str(row["processor"]),
        vnni=bool(row["vnni"]),
        avx512_bf16=bool(row["avx512_bf16"]),
        amx=bool(row["amx"]),
    )
