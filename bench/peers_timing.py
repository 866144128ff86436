"""How bench/peers.py times its variants, and on what: the CPU's model and the kernel flags its figures
depend on, each variant timed once per round in a rotated order, and a median with its 95% interval.
bench/openvino_static_int8.py times the same way."""

from __future__ import annotations

import math
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

KERNEL_FLAGS = (
    "avx2",
    "fma",
    "avx512f",
    "avx512bw",
    "avx512_vnni",
    "avx_vnni",
    "avx512_bf16",
    "amx_bf16",
    "amx_int8",
    "amx_tile",
)


def _cpuinfo(field: str) -> str:
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.is_file() else []
    line = next((x for x in lines if x.split(":")[0].strip() == field), "")
    return line.split(":", 1)[1].strip() if ":" in line else ""


def cpu_flags() -> list[str]:
    present = _cpuinfo("flags").split()
    return [f for f in KERNEL_FLAGS if f in present]


def cpu_model() -> str:
    """The CPU's model name, with its family and model numbers (a VM may show only "AMD EPYC")."""
    return f"{_cpuinfo('model name') or platform.processor()} (family {_cpuinfo('cpu family')}, model {_cpuinfo('model')})"


def quantization_isa(flags: list[str]) -> str:
    """sentence-transformers' quantization config for this CPU (its documented choices)."""
    if platform.machine() in ("aarch64", "arm64"):
        return "arm64"
    if "avx512_vnni" in flags:
        return "avx512_vnni"
    return "avx512" if "avx512f" in flags else "avx2"


def median_interval(values: list[float]) -> tuple[float, float, float]:
    """Median and its distribution-free 95% interval (binomial order statistics)."""
    ordered = sorted(values)
    n = len(ordered)
    half = 1.96 * math.sqrt(n) / 2
    low = max(0, math.floor(n / 2 - half))
    high = min(n - 1, math.ceil(n / 2 + half) - 1)
    return statistics.median(ordered), ordered[low], ordered[high]


def rotated_samples(
    variants: dict[str, Callable[[list[str]], Any]], batch: list[str], rounds: int
) -> dict[str, list[float]]:
    """Milliseconds of each variant, one call each per round, the order rotated by one each round."""
    names = list(variants)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for index in range(rounds):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            started = time.perf_counter()
            variants[name](batch)
            samples[name].append((time.perf_counter() - started) * 1000)
    return samples
