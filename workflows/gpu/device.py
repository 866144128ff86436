"""Which device a spec's artifact serves on, and the onnxruntime build and providers that go with it.

``code/inference.py`` runs on the HF inference DLC in the real-time, inference-component and
scale-to-zero modes; on a GPU instance it must run on the GPU. onnxruntime's CPU package has no GPU
provider, and a GPU build made for another CUDA or cuDNN major loads neither: in both cases the
session runs on ``CPUExecutionProvider`` with only a warning (F36). The builds come from
``workflows/data/onnxruntime_gpu.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Any, Literal

import yaml

from workflows.images.accelerators import is_gpu_instance
from workflows.images.table import repository_of

Device = Literal["cpu", "gpu"]
CPU_PACKAGE = "onnxruntime"
GPU_PACKAGE = "onnxruntime-gpu"
# The provider order the serving code asks onnxruntime for, by engine; the first is the one that
# must be active (inference.py refuses to serve otherwise).
PROVIDERS = {
    "cpu": ["CPUExecutionProvider"],
    "cuda": ["CUDAExecutionProvider", "CPUExecutionProvider"],
    "tensorrt": ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"],
}
ARTIFACT_MODES = ("realtime", "inference-component", "scale-to-zero")
"""Modes whose GPU instances serve ``code/inference.py`` (multi-container and serverless are CPU only)."""


@dataclass(frozen=True)
class GpuBuild:
    """What a PyPI onnxruntime-gpu release is built for."""

    version: str
    cuda_major: int
    cudnn_major: int
    note: str


@lru_cache(maxsize=1)
def build_table() -> dict[str, Any]:
    return yaml.safe_load((files("workflows") / "data" / "onnxruntime_gpu.yaml").read_text(encoding="utf-8"))


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("+", 1)[0].split(".")[:3] if part.isdigit())


def artifact_device(hosting: Any) -> Device:
    """``gpu`` when the first instance type is a GPU type (fallbacks are checked by the preflight)."""
    types = getattr(hosting, "instance_type_fallbacks", None) or []
    return "gpu" if types and is_gpu_instance(types[0]) else "cpu"


def serving_engine(device: Device, engine: str) -> str:
    """The provider family the serving code asks for: ``cpu``, ``cuda`` or ``tensorrt``."""
    if device == "cpu":
        return "cpu"
    return "tensorrt" if engine == "tensorrt" else "cuda"


def gpu_build(version: str) -> GpuBuild | None:
    """The CUDA and cuDNN majors PyPI's onnxruntime-gpu ``version`` is built for; None before 1.15."""
    found = None
    for row in build_table()["pypi_builds"]:
        if _version(version) >= _version(str(row["since"])):
            found = GpuBuild(version, int(row["cuda_major"]), int(row["cudnn_major"]), str(row["note"]))
    return found


def image_cudnn_major(image: str) -> int | None:
    """The cuDNN major an image ships, from its family's framework version (the tag's first field,
    e.g. ``2.6.0-transformers4.51.3-gpu-...`` is PyTorch 2.6.0); None when the table does not say."""
    rows = (build_table().get("image_cudnn") or {}).get(repository_of(image))
    tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else ""
    framework = _version(tag.split("-", 1)[0]) if tag else ()
    if not rows or not framework:
        return None
    for row in rows:
        if framework >= _version(str(row["framework_since"])):
            return int(row["cudnn_major"])
    return None


def requirement_line(device: Device, onnxruntime_version: str) -> str:
    """The onnxruntime line of ``code/requirements.txt``: the GPU build on a GPU, pinned to the
    version parity was measured on (F01)."""
    package = GPU_PACKAGE if device == "gpu" else CPU_PACKAGE
    return f"{package}=={onnxruntime_version}"
