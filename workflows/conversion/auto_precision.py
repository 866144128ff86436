"""What ``convert.precision: auto`` serves on a target instance type: the fastest artifact whose
embeddings stay at cosine >= 0.999 to fp32, as measured (bench/peers.py, bench/results/peers.json).

Measured on AMD EPYC Zen 4 (AVX512-BF16, AVX-512 VNNI, no AMX), MiniLM, texts in and vectors out:
the fp32 graph served by OpenVINO, which computes in bf16 there, is the fastest variant at cosine
>= 0.999 (min cosine 0.99998 in bf16), ahead of the same graph on onnxruntime. INT8 does not qualify:
its min cosine is 0.998. So a CPU whose processor computes bf16 (AVX512-BF16 or AMX; on SageMaker
endpoints the 7i families, whose AMX was not measured here) gets the fp32 graph on OpenVINO, and every
other CPU keeps onnxruntime's fp32, which nothing here has measured slower there. GPUs keep onnxruntime (fp16 is asked for, never chosen, because it
has its own guard). Only embeddings are measured: classifiers keep onnxruntime's fp32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from workflows.images.cpu_isa import cpu_isa

FP32_LIKE_COSINE = 0.999
# Measured in one run of bench/peers.py (b8 x 128 and b1, one thread): OpenVINO's bf16 against fp32.
OPENVINO_BF16_MIN_COSINE = 0.99998


@dataclass(frozen=True)
class AutoChoice:
    """The artifact ``precision: auto`` builds, and why, for the spec's first instance type."""

    precision: Literal["fp32", "int8"]
    engine: Literal["onnxruntime", "openvino"]
    basis: str


def auto_choice(instance_type: str | None, *, device: str, task: str) -> AutoChoice:
    """The fastest artifact at cosine >= 0.999 to fp32 for ``instance_type``, as measured."""
    if device != "cpu":
        return AutoChoice("fp32", "onnxruntime", "GPU target: fp32 on onnxruntime's GPU provider")
    isa = cpu_isa(instance_type) if instance_type else None
    if isa is None:
        unknown = (
            f"{instance_type}: its processor is not in data/cpu_isa.yaml"
            if instance_type
            else "no instance type (serverless): the processor is unknown"
        )
        return AutoChoice("fp32", "onnxruntime", f"{unknown}, fp32 on onnxruntime")
    if not isa.bf16:
        return AutoChoice(
            "fp32",
            "onnxruntime",
            f"{isa.family} ({isa.processor}) computes no bf16, and INT8 stays below cosine "
            f"{FP32_LIKE_COSINE}: fp32 on onnxruntime",
        )
    if task != "embedding":
        return AutoChoice(
            "fp32",
            "onnxruntime",
            f"{isa.family} computes bf16, but OpenVINO's bf16 is measured on embeddings only: fp32 on onnxruntime",
        )
    return AutoChoice(
        "fp32",
        "openvino",
        f"{isa.family} ({isa.processor}) computes bf16: the fp32 graph on OpenVINO, served in bf16 "
        f"(min cosine {OPENVINO_BF16_MIN_COSINE} to fp32, bench/results/peers.json)",
    )
