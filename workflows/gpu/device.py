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
# The OpenVINO release CPU artifacts with convert.engine 'openvino' install: the one bench/peers.py
# measures (bench/peers-requirements.in pins the same).
OPENVINO_REQUIREMENT = "openvino==2026.4.1"
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
    tensorrt_major: int | None = None
    sonames: tuple[str, ...] = ()
    """What its providers link (NEEDED), when the table records the wheel; empty otherwise."""


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


def _major(sonames: list[str], library: str) -> int | None:
    prefix = f"{library}.so."
    majors = {int(s[len(prefix) :]) for s in sonames if s.startswith(prefix) and s[len(prefix) :].isdigit()}
    return max(majors) if majors else None


def recorded_builds() -> dict[str, GpuBuild]:
    """The releases whose wheels the table records, with the majors their providers link."""
    builds = {}
    for row in build_table().get("wheels") or []:
        sonames = sorted({*row.get("cuda", []), *row.get("tensorrt", [])})
        cuda, cudnn = _major(sonames, "libcudart"), _major(sonames, "libcudnn")
        if cuda is None or cudnn is None:
            continue
        builds[str(row["version"])] = GpuBuild(
            str(row["version"]),
            cuda,
            cudnn,
            f"its wheel {row['wheel']} links {', '.join(row.get('cuda', []))}",
            _major(sonames, "libnvinfer"),
            tuple(sonames),
        )
    return builds


def newest_build_for(cuda_major: int) -> GpuBuild | None:
    """The newest recorded release built for ``cuda_major`` (what a CUDA ``cuda_major`` image can load)."""
    matching = [b for b in recorded_builds().values() if b.cuda_major == cuda_major]
    return max(matching, key=lambda b: _version(b.version)) if matching else None


def gpu_build(version: str) -> GpuBuild | None:
    """The CUDA and cuDNN majors PyPI's onnxruntime-gpu ``version`` is built for: from its recorded
    wheel, else from the release ranges; None before 1.15."""
    recorded = recorded_builds().get(version)
    if recorded is not None:
        return recorded
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


def serving_image_cuda_major(hosting: Any) -> int | None:
    """The CUDA major of the image a GPU artifact is served by: ``hosting.image``, else the HF PyTorch
    inference GPU build the spec selects; None when the table does not say."""
    from workflows.images.table import HF_INFERENCE, image_cuda, image_entry

    image = getattr(hosting, "image", None)
    if not image:
        entry = image_entry(HF_INFERENCE, gpu=True, version=getattr(hosting, "image_version", None))
        image = f"{entry['repository']}:{entry['tag']}"
    cuda = image_cuda(str(image))
    return cuda[0] if cuda else None


def gpu_release(onnxruntime_version: str, image_cuda_major: int | None) -> str:
    """The onnxruntime-gpu release a GPU artifact pins: the conversion's own when it is built for the
    image's CUDA major (F01: the version parity was measured on), else the newest release built for
    it (PyPI's 1.27 and later link CUDA 13, which a CUDA 12 image cannot load: F36)."""
    own = gpu_build(onnxruntime_version)
    if image_cuda_major is None or (own is not None and own.cuda_major == image_cuda_major):
        return onnxruntime_version
    newest = newest_build_for(image_cuda_major)
    return newest.version if newest else onnxruntime_version


def requirement_line(device: Device, onnxruntime_version: str) -> str:
    """The onnxruntime line of ``code/requirements.txt``: the CPU package pinned to the version parity
    was measured on (F01), or the GPU build ``onnxruntime_version`` (see :func:`gpu_release`)."""
    package = GPU_PACKAGE if device == "gpu" else CPU_PACKAGE
    return f"{package}=={onnxruntime_version}"
