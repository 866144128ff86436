"""F36 preflight: the artifact's device and onnxruntime build against the instance and the image."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gpu import GPU_INSTANCE, HF_GPU_IMAGE, TRITON_CUDA13_IMAGE, gpu_spec
from workflows.artifact.manifest import ArtifactManifest
from workflows.conversion.manifest import read_manifest
from workflows.gpu.plan import serving_plan
from workflows.hosting.modes import run_checks
from workflows.preflight import ArtifactView, build_context
from workflows.preflight.gpu import check_gpu_runtime
from workflows.spec.pipeline import parse_spec


@pytest.fixture(scope="module")
def cpu_manifest(tiny_artifact: Path) -> ArtifactManifest:
    return read_manifest(tiny_artifact)


@pytest.fixture(scope="module")
def gpu_manifest(cpu_manifest: ArtifactManifest, tiny_bert: Path) -> ArtifactManifest:
    plan = serving_plan(gpu_spec(tiny_bert), cpu_manifest.onnxruntime_version)
    return cpu_manifest.model_copy(update={"serving": plan})


def test_a_gpu_artifact_on_the_hf_gpu_image_pins_the_newest_cuda_12_build_and_passes(
    gpu_manifest: ArtifactManifest,
) -> None:
    # Given a GPU artifact converted with onnxruntime 1.31.1 (its GPU wheel links libcudart.so.13)
    # for the HF DLC GPU image (CUDA 12.4, PyTorch 2.6's cuDNN 9)
    assert gpu_manifest.onnxruntime_version == "1.31.1"
    # Then its requirement pins 1.26.0, the newest onnxruntime-gpu whose wheel links libcudart.so.12
    assert gpu_manifest.serving.requirement == "onnxruntime-gpu==1.26.0"
    assert (gpu_manifest.serving.cuda_major, gpu_manifest.serving.cudnn_major) == (12, 9)
    # And F36 passes it
    findings = check_gpu_runtime(
        instance_type=GPU_INSTANCE,
        image=HF_GPU_IMAGE,
        manifest=gpu_manifest,
        requirements=gpu_manifest.serving.requirement,
    )
    assert findings == []


def test_a_cpu_artifact_on_a_gpu_instance_is_blocked(cpu_manifest: ArtifactManifest) -> None:
    # Given the CPU artifact (onnxruntime, CPU provider) on ml.g5.xlarge
    findings = check_gpu_runtime(
        instance_type=GPU_INSTANCE,
        image=HF_GPU_IMAGE,
        manifest=cpu_manifest,
        requirements="onnxruntime==1.31.1\n",
    )
    # Then F36 blocks it: the GPU would be paid for and the vCPUs benchmarked
    assert [(f.id, f.severity) for f in findings] == [("F36", "blocking")]
    assert "benchmark the instance's vCPUs" in findings[0].message


def test_a_cuda_mismatch_is_blocked_naming_both_versions(gpu_manifest: ArtifactManifest) -> None:
    # Given the CUDA 12 build on an image with CUDA 13.2
    findings = check_gpu_runtime(
        instance_type=GPU_INSTANCE,
        image=TRITON_CUDA13_IMAGE,
        manifest=gpu_manifest,
        requirements=gpu_manifest.serving.requirement,
    )
    # Then it is blocked, naming the build's CUDA/cuDNN and the image's CUDA
    assert [(f.id, f.severity) for f in findings] == [("F36", "blocking")]
    message = findings[0].message
    assert "onnxruntime-gpu 1.26.0 is built for CUDA 12.x and cuDNN 9" in message
    assert "has CUDA 13.2" in message
    assert findings[0].fix.startswith("pin onnxruntime-gpu==1.31.1, the newest release built for CUDA 13")


def test_a_cuda_13_pin_on_a_cu124_image_is_blocked(gpu_manifest: ArtifactManifest) -> None:
    # Given code/requirements.txt pinning onnxruntime-gpu 1.31.1 (PyPI's wheel links libcudart.so.13,
    # libcublas.so.13) for the HF DLC GPU image with CUDA 12.4
    findings = check_gpu_runtime(
        instance_type=GPU_INSTANCE,
        image=HF_GPU_IMAGE,
        manifest=gpu_manifest,
        requirements="onnxruntime-gpu==1.31.1\n",
    )
    # Then F36 blocks it, naming both CUDA majors and the release to pin instead
    assert [(f.id, f.severity) for f in findings] == [("F36", "blocking")]
    assert "onnxruntime-gpu 1.31.1 is built for CUDA 13.x and cuDNN 9, but" in findings[0].message
    assert "has CUDA 12.4" in findings[0].message
    assert "libcudart.so.13" in findings[0].evidence
    assert findings[0].fix.startswith("pin onnxruntime-gpu==1.26.0, the newest release built for CUDA 12")


def test_the_tensorrt_engine_on_the_hf_dlc_is_refused_naming_libnvinfer(
    gpu_manifest: ArtifactManifest,
) -> None:
    # Given a TensorRT artifact for the HF DLC GPU image, which ships no TensorRT
    tensorrt = gpu_manifest.model_copy(
        update={"serving": gpu_manifest.serving.model_copy(update={"engine": "tensorrt"})}
    )
    findings = check_gpu_runtime(
        instance_type=GPU_INSTANCE,
        image=HF_GPU_IMAGE,
        manifest=tensorrt,
        requirements=tensorrt.serving.requirement,
    )
    # Then F36 blocks it: the provider links libnvinfer.so.10, which neither the image nor PyPI ships
    assert [(f.id, f.severity) for f in findings] == [("F36", "blocking")]
    assert (
        "links libnvinfer.so.10, libnvonnxparser.so.10, which the image does not ship" in findings[0].message
    )
    assert findings[0].fix.startswith("use convert.engine onnxruntime")


def test_a_cudnn_mismatch_is_blocked(gpu_manifest: ArtifactManifest) -> None:
    # An HF DLC with PyTorch 2.1 (cuDNN 8) and CUDA 12.1
    image = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-inference:2.1.0-transformers4.37.0-gpu-py310-cu121-ubuntu20.04"
    findings = check_gpu_runtime(
        instance_type=GPU_INSTANCE,
        image=image,
        manifest=gpu_manifest,
        requirements=gpu_manifest.serving.requirement,
    )
    assert [(f.id, f.severity) for f in findings] == [("F36", "blocking")]
    assert "has CUDA 12.1 and cuDNN 8" in findings[0].message


def test_a_gpu_artifact_on_a_cpu_instance_is_blocked(gpu_manifest: ArtifactManifest) -> None:
    findings = check_gpu_runtime(
        instance_type="ml.c6i.xlarge",
        image=HF_GPU_IMAGE,
        manifest=gpu_manifest,
        requirements=gpu_manifest.serving.requirement,
    )
    assert [(f.id, f.severity) for f in findings] == [("F36", "blocking")]
    assert "refuses to start without its GPU provider" in findings[0].message


def test_the_pipeline_preflight_runs_f36_and_warns_on_a_cpu_fallback_type(
    gpu_manifest: ArtifactManifest, tiny_artifact: Path, tiny_bert: Path
) -> None:
    # Given a GPU spec whose fallback is a CPU type, and its GPU artifact
    spec = parse_spec(
        {
            **gpu_spec(tiny_bert).model_dump(mode="json", exclude={"hosting"}),
            "hosting": {"instance_type_fallbacks": [GPU_INSTANCE, "ml.c6i.xlarge"]},
        }
    )
    artifact = ArtifactView(tiny_artifact, gpu_manifest)
    result = run_checks(build_context(spec, artifact))
    # Then the check ran, and the CPU fallback warns (it is used only after a capacity stall)
    assert any(label.startswith("F36 ") for label in result.checked)
    f36 = [f for f in result.findings if f.id == "F36"]
    # The tiny artifact's own requirements.txt is the CPU one: the primary GPU type blocks on it
    assert [f.severity for f in f36] == ["blocking", "warning"]
    assert f36[1].message.startswith("fallback ml.c6i.xlarge: the artifact is built for a GPU")


def test_tensorrt_on_scale_to_zero_warns_that_engines_are_rebuilt(tiny_bert: Path) -> None:
    spec = parse_spec(
        {
            "name": "s2z",
            "model": {"source": str(tiny_bert)},
            "hosting": {
                "mode": "scale-to-zero",
                "instance_type_fallbacks": [GPU_INSTANCE],
                "accelerator_devices": 1,
            },
            "convert": {"engine": "tensorrt"},
        }
    )
    result = run_checks(build_context(spec))
    warning = [f for f in result.findings if f.id == "F21"]
    assert len(warning) == 1 and warning[0].severity == "warning"
    assert "rebuilds its TensorRT engines after every scale-out" in warning[0].message
