"""F36: a GPU endpoint must run on its GPU. The artifact's device and onnxruntime build against the
instance and the image's CUDA and cuDNN; TensorRT engines on a scale-to-zero endpoint (F21).

onnxruntime runs a session on ``CPUExecutionProvider`` with only a warning when its GPU provider
cannot load: the CPU package on a GPU instance, or a GPU build made for another CUDA or cuDNN major
than the image's. Every benchmark of such an endpoint reports CPU figures under a GPU's name.
"""

from __future__ import annotations

from workflows.artifact.manifest import ArtifactManifest
from workflows.artifact.requirements import requirement_names, requirements_of
from workflows.contracts import Finding
from workflows.gpu.device import CPU_PACKAGE, GPU_PACKAGE, gpu_build, image_cudnn_major, newest_build_for
from workflows.hosting.spec_bases import InstanceSettings
from workflows.images.table import HF_INFERENCE, image_cuda, image_entries, image_uri, repository_of
from workflows.preflight.context import PreflightContext
from workflows.preflight.registry import Check
from workflows.spec.pipeline import is_gpu_instance

F36 = "F36"


def pinned_version(requirements: str, package: str) -> str | None:
    """The ``==`` version of ``package`` in a requirements.txt, if pinned."""
    for line in requirements_of(requirements, package):
        for specifier in line.requirement.specifier:
            if specifier.operator == "==":
                return specifier.version
    return None


def _finding(message: str, fix: str, evidence: str, severity: str = "blocking") -> Finding:
    return Finding(id=F36, severity=severity, message=message, fix=fix, evidence=evidence)  # type: ignore[arg-type]


def _build_vs_image(version: str, image: str) -> list[Finding]:
    build = gpu_build(version)
    if build is None:
        return [
            _finding(
                f"{GPU_PACKAGE} {version} is not in workflows/data/onnxruntime_gpu.yaml, so its CUDA and cuDNN "
                "cannot be compared with the image's.",
                "pin an onnxruntime-gpu release the table lists (1.19 or later for CUDA 12)",
                f"{GPU_PACKAGE}=={version}",
            )
        ]
    built = f"{GPU_PACKAGE} {version} is built for CUDA {build.cuda_major}.x and cuDNN {build.cudnn_major}"
    cuda, cudnn = image_cuda(image), image_cudnn_major(image)
    if cuda is None:
        return [
            _finding(
                f"{built}; the CUDA version of {image} is not known (not in images.yaml, no cu124-style CUDA in its tag), so "
                "the match is not verified.",
                "use an image listed in workflows/data/images.yaml, or check its CUDA by hand",
                image,
                "warning",
            )
        ]
    image_text = f"{image} has CUDA {cuda[0]}.{cuda[1]}" + (f" and cuDNN {cudnn}" if cudnn else "")
    if cuda[0] != build.cuda_major or (cudnn is not None and cudnn != build.cudnn_major):
        fitting = newest_build_for(cuda[0])
        pin = (
            f"pin {GPU_PACKAGE}=={fitting.version}, the newest release built for CUDA {cuda[0]} (convert again: "
            "the convert step pins it for the image)"
            if fitting is not None
            else f"no recorded {GPU_PACKAGE} release is built for CUDA {cuda[0]}"
        )
        return [
            _finding(
                f"{built}, but {image_text}: its CUDA provider would not load and onnxruntime would run the "
                "model on the CPU with only a warning.",
                f"{pin}; or use an image with CUDA {build.cuda_major}.x and cuDNN {build.cudnn_major}",
                f"{GPU_PACKAGE}=={version} ({build.note}); {image_text}",
            )
        ]
    if cudnn is None:
        return [
            _finding(
                f"{built}; {image_text}, and its cuDNN is not known, so the cuDNN match is not verified.",
                "check the image's cuDNN major by hand",
                image,
                "warning",
            )
        ]
    return []


TENSORRT_REFUSED = (
    "its TensorRT provider links {sonames}, which the image does not ship, and the artifact cannot: PyPI "
    "holds no TensorRT libraries (tensorrt-cu12-libs is a 15 kB source package that downloads them from "
    "NVIDIA's own index while pip installs it, which the endpoint's container start, and any isolated "
    "endpoint, cannot rely on). onnxruntime would fall back to the CUDA provider, or the serving code refuse to start."
)


def _tensorrt_vs_image(version: str, image: str) -> list[Finding]:
    build = gpu_build(version)
    sonames = [s for s in (build.sonames if build else ()) if s.startswith(("libnvinfer", "libnvonnxparser"))]
    listed = ", ".join(sonames) or "libnvinfer.so.10"
    shipped = any(e.get("tensorrt") for e in image_entries(image) if e.get("tag") == image.rsplit(":", 1)[-1])
    if shipped:
        return []
    known = repository_of(image) == repository_of(image_uri(HF_INFERENCE, gpu=True, region="us-east-1"))
    return [
        _finding(
            f"convert.engine tensorrt: {GPU_PACKAGE} {version} {TENSORRT_REFUSED.format(sonames=listed)}",
            "use convert.engine onnxruntime (the CUDA provider: the image ships what it links), or set "
            "hosting.image to an image that ships TensorRT 10 and record it (tensorrt) in workflows/data/images.yaml",
            f"{GPU_PACKAGE}=={version}; {image}",
            "blocking" if known else "warning",
        )
    ]


def check_gpu_runtime(
    *, instance_type: str, image: str, manifest: ArtifactManifest, requirements: str | None
) -> list[Finding]:
    """F36 for one instance type: the artifact's device, its onnxruntime package and build, the image."""
    names = requirement_names(requirements or "")
    device, evidence = (
        manifest.serving.device,
        f"manifest device {manifest.serving.device}; requirements {sorted(names)}",
    )
    if not is_gpu_instance(instance_type):
        if device == "gpu":
            return [
                _finding(
                    f"the artifact is built for a GPU ({manifest.serving.providers[0]}), and {instance_type} has "
                    "none: the serving code refuses to start without its GPU provider.",
                    "convert again for this instance type (the convert step picks the device from "
                    "hosting.instance_type_fallbacks[0]), or deploy on a GPU instance",
                    evidence,
                )
            ]
        return []
    if device == "cpu" or (CPU_PACKAGE in names and GPU_PACKAGE not in names):
        return [
            _finding(
                f"{instance_type} is a GPU instance, but the artifact runs onnxruntime's CPU provider "
                f"({'CPU package onnxruntime in code/requirements.txt' if CPU_PACKAGE in names else 'built for CPU'}): "
                "you would pay for the GPU and benchmark the instance's vCPUs.",
                "convert again with this spec: a GPU instance type gets onnxruntime-gpu and the CUDA provider",
                evidence,
            )
        ]
    version = pinned_version(requirements or "", GPU_PACKAGE)
    if version is None:
        return [
            _finding(
                f"code/requirements.txt does not pin {GPU_PACKAGE}, so its CUDA and cuDNN cannot be checked "
                "against the image's.",
                f"pin {GPU_PACKAGE}==<the onnxruntime version used for conversion>",
                evidence,
            )
        ]
    found = _build_vs_image(version, image)
    if manifest.serving.engine == "tensorrt":
        found += _tensorrt_vs_image(version, image)
    return found


def gpu_runtime(context: PreflightContext, hosting: InstanceSettings) -> list[Finding]:
    artifact = context.artifact
    assert artifact is not None
    findings: list[Finding] = []
    for position, name in enumerate(hosting.instance_type_fallbacks):
        image = hosting.image or image_uri(HF_INFERENCE, gpu=is_gpu_instance(name), region=context.region)
        found = check_gpu_runtime(
            instance_type=name, image=image, manifest=artifact.manifest, requirements=artifact.requirements
        )
        if position:
            # A fallback type is used only after a capacity stall: it warns, it does not block.
            found = [
                f.model_copy(update={"severity": "warning", "message": f"fallback {name}: {f.message}"})
                for f in found
            ]
        findings.extend(found)
    return findings


def engines_after_scale_out(context: PreflightContext, hosting: object) -> list[Finding]:
    """F21: TensorRT engines are cached under the model folder of an instance; scale to zero drops it."""
    if context.spec.convert.engine != "tensorrt":
        return []
    return [
        Finding(
            id="F21",
            severity="warning",
            message="a scale-to-zero endpoint rebuilds its TensorRT engines after every scale-out: the engine "
            "cache lives under the model folder of an instance, which goes away at scale-in, so the first calls "
            "per shape after each scale-out include an engine build (47.7 s for b1 in the field, over 60 s for b8).",
            fix="use convert.engine onnxruntime (the CUDA provider builds nothing), or keep an instance",
            evidence="convert.engine tensorrt; hosting.mode scale-to-zero",
        )
    ]


# Declared by the modes that serve the converted artifact on instances (ARTIFACT_MODES).
GPU_RUNTIME: Check[InstanceSettings] = Check(
    "artifact device and onnxruntime build vs instance and image", (F36,), gpu_runtime, ("artifact",)
)
TENSORRT_AFTER_SCALE_OUT: Check[object] = Check(
    "TensorRT engines after scale-out", ("F21",), engines_after_scale_out
)
