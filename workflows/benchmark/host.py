"""The CPU a benchmark ran on: model name, core count and the vector extensions that matter.

Kept beside the figures because a local run's endpoint shares this CPU: its latency says what
this machine does, not what the named SageMaker instance type would. Standard library only (the
processing job ships this module as source).
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

CPUINFO = Path("/proc/cpuinfo")
# Flag names as /proc/cpuinfo spells them -> the extension an inference runtime cares about.
# onnxruntime's int8 kernels use VNNI and AMX where present; fp32 uses AVX-512 or AVX2.
EXTENSIONS = (
    ("avx2", ("avx2",)),
    ("avx512", ("avx512f",)),
    ("vnni", ("avx512_vnni", "avx_vnni")),
    ("bf16", ("avx512_bf16", "bf16")),
    ("amx", ("amx_tile",)),
    ("neon", ("asimd",)),
    ("sve", ("sve",)),
)


def _cpuinfo(text: str) -> tuple[str, set[str]]:
    """The first processor's model name and flags (x86 ``flags``, Arm ``Features``)."""
    model, flags = "", set[str]()
    for line in text.splitlines():
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name in ("model name", "hardware", "cpu model") and not model:
            model = value.strip()
        elif name in ("flags", "features") and not flags:
            flags = set(value.split())
    return model, flags


def cpu_summary(cpuinfo: str | None = None) -> dict[str, Any]:
    """Model name, logical CPUs (and how many this process may use) and the extensions present.

    Args:
        cpuinfo: the text of ``/proc/cpuinfo``; read from the machine when None.
    """
    if cpuinfo is None:
        try:
            cpuinfo = CPUINFO.read_text(encoding="utf-8", errors="replace")
        except OSError:
            cpuinfo = ""
    model, flags = _cpuinfo(cpuinfo)
    logical = os.cpu_count() or 0
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else logical
    extensions = [name for name, spellings in EXTENSIONS if flags & set(spellings)]
    return {
        "model": model or platform.processor() or platform.machine() or "unknown CPU",
        "machine": platform.machine(),
        "logical_cpus": logical,
        "usable_cpus": usable,
        "extensions": extensions,
    }


def describe_cpu(cpu: dict[str, Any]) -> str:
    """One line: ``AMD EPYC, 2 logical CPUs, avx2/avx512/vnni/bf16``."""
    usable, logical = cpu.get("usable_cpus"), cpu.get("logical_cpus")
    cores = f"{logical} logical CPUs" + (f" ({usable} usable)" if usable and usable != logical else "")
    extensions = "/".join(cpu.get("extensions") or []) or "no avx2/avx512/neon"
    return f"{cpu.get('model', 'unknown CPU')}, {cores}, {extensions}"
