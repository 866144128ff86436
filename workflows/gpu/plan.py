"""The artifact's serving plan: device, providers, the onnxruntime requirement, TensorRT profiles."""

from __future__ import annotations

from typing import Any

from workflows.artifact.manifest import ServingPlan, TensorrtProfile
from workflows.gpu.device import (
    OPENVINO_REQUIREMENT,
    PROVIDERS,
    artifact_device,
    gpu_build,
    gpu_release,
    requirement_line,
    serving_engine,
    serving_image_cuda_major,
)

# A natural text of the benchmark (median 18 words) is 20-40 tokens: the profile is tuned for 32
# and accepts anything up to the model's maximum.
NATURAL_OPT_TOKENS = 32


def tensorrt_profiles(benchmark: Any, max_sequence_length: int) -> list[TensorrtProfile]:
    """One profile per benchmark shape (F21: TensorRT builds an engine per shape).

    The serving code splits a request into micro-batches of at most ``batch_size`` texts, so every
    profile starts at batch 1; a padded shape has one length, a natural one any up to the maximum.
    """
    profiles = []
    for batch in benchmark.batch_sizes:
        for length in benchmark.sequence_lengths:
            if length == "natural":
                low, opt, high = 1, min(NATURAL_OPT_TOKENS, max_sequence_length), max_sequence_length
            else:
                low = opt = high = int(length)
            profiles.append(
                TensorrtProfile(
                    shape=f"b{batch}/{length}",
                    min_batch=1,
                    max_batch=int(batch),
                    min_length=low,
                    opt_length=opt,
                    max_length=high,
                )
            )
    return profiles


def serving_plan(spec: Any, onnxruntime_version: str) -> ServingPlan:
    """What ``code/inference.py`` must run the graph on for ``spec``'s first instance type.

    On a GPU the requirement pins the onnxruntime-gpu release built for the serving image's CUDA
    major, which may be older than the conversion's ``onnxruntime_version`` (F36).
    """
    device = artifact_device(spec.hosting)
    engine = serving_engine(device, spec.convert.engine)
    release = (
        gpu_release(onnxruntime_version, serving_image_cuda_major(spec.hosting)) if device == "gpu" else ""
    )
    build = gpu_build(release) if device == "gpu" else None
    openvino = device == "cpu" and spec.convert.engine == "openvino"
    return ServingPlan(
        device=device,
        engine=engine,  # type: ignore[arg-type]
        providers=list(PROVIDERS[engine]),
        requirement=requirement_line(device, release or onnxruntime_version),
        runtime="openvino" if openvino else "onnxruntime",
        runtime_requirement=OPENVINO_REQUIREMENT if openvino else "",
        inference_precision="f32" if openvino and spec.convert.inference_precision == "f32" else "",
        cuda_major=build.cuda_major if build else None,
        cudnn_major=build.cudnn_major if build else None,
        tensorrt_profiles=(
            tensorrt_profiles(spec.benchmark, spec.model.max_sequence_length) if engine == "tensorrt" else []
        ),
    )
