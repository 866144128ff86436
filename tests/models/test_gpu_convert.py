"""GPU conversion without a GPU: requirements and providers by device, fp16 and its parity (F29), specs."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto

from tests.conftest import fast_spec
from tests.support.gpu import GPU_INSTANCE, convert_for, gpu_spec
from workflows.conversion.manifest import read_manifest
from workflows.errors import QuantizationCollapsed, SpecInvalid
from workflows.gpu.device import gpu_build, image_cudnn_major
from workflows.gpu.fp16 import relative_attention_nodes
from workflows.gpu.plan import serving_plan
from workflows.spec.pipeline import parse_spec

ModelFactory = Callable[..., Path]
VERSION = "1.31.1"


@pytest.mark.parametrize(
    ("hosting", "device", "requirement", "first"),
    [
        (
            {"instance_type_fallbacks": ["ml.c6i.xlarge"]},
            "cpu",
            "onnxruntime==1.31.1",
            "CPUExecutionProvider",
        ),
        (
            {"instance_type_fallbacks": [GPU_INSTANCE]},
            "gpu",
            "onnxruntime-gpu==1.26.0",
            "CUDAExecutionProvider",
        ),
        (
            {
                "mode": "inference-component",
                "instance_type_fallbacks": [GPU_INSTANCE],
                "accelerator_devices": 1,
            },
            "gpu",
            "onnxruntime-gpu==1.26.0",
            "CUDAExecutionProvider",
        ),
        ({"mode": "serverless"}, "cpu", "onnxruntime==1.31.1", "CPUExecutionProvider"),
    ],
)
def test_the_requirement_and_providers_follow_the_device(
    hosting: dict[str, object], device: str, requirement: str, first: str
) -> None:
    # Given a spec hosted on that device
    spec = parse_spec({"name": "gpu-test", "hosting": hosting})
    # When the convert step plans the serving
    plan = serving_plan(spec, VERSION)
    # Then the requirement and the provider asked for follow the device: on a GPU, the newest
    # onnxruntime-gpu built for the HF DLC's CUDA 12 (1.27 and later link libcudart.so.13)
    assert (plan.device, plan.requirement, plan.providers[0]) == (device, requirement, first)
    assert (plan.cuda_major, plan.cudnn_major) == ((12, 9) if device == "gpu" else (None, None))


def test_gpu_builds_and_image_cudnn_come_from_the_table() -> None:
    # PyPI onnxruntime-gpu: CUDA 13 from 1.27, CUDA 12 + cuDNN 9 from 1.19, CUDA 11.8 + cuDNN 8 before,
    # unknown before 1.15
    assert (gpu_build("1.31.1").cuda_major, gpu_build("1.31.1").cudnn_major) == (13, 9)  # type: ignore[union-attr]
    assert (gpu_build("1.26.0").cuda_major, gpu_build("1.26.0").cudnn_major) == (12, 9)  # type: ignore[union-attr]
    assert (gpu_build("1.18.0").cuda_major, gpu_build("1.18.0").cudnn_major) == (11, 8)  # type: ignore[union-attr]
    assert gpu_build("1.14.1") is None
    # The HF PyTorch DLC ships its PyTorch's cuDNN; an image the table does not know gives None
    assert (
        image_cudnn_major(
            "x/huggingface-pytorch-inference:2.6.0-transformers4.51.3-gpu-py312-cu124-ubuntu22.04"
        )
        == 9
    )
    assert (
        image_cudnn_major(
            "x/huggingface-pytorch-inference:2.1.0-transformers4.37.0-gpu-py310-cu118-ubuntu20.04"
        )
        == 8
    )
    assert image_cudnn_major("x/sagemaker-tritonserver:26.05-py3") is None


def test_tensorrt_gets_one_profile_per_benchmark_shape(tiny_bert: Path) -> None:
    spec = gpu_spec(tiny_bert, engine="tensorrt")
    plan = serving_plan(spec, VERSION)
    assert plan.providers == ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]
    # fast_spec measures b1, b2 x natural, 16 at max length 64
    shapes = {
        p.shape: (p.min_batch, p.max_batch, p.min_length, p.opt_length, p.max_length)
        for p in plan.tensorrt_profiles
    }
    assert shapes == {
        "b1/natural": (1, 1, 1, 32, 64),
        "b1/16": (1, 1, 16, 16, 16),
        "b2/natural": (1, 2, 1, 32, 64),
        "b2/16": (1, 2, 16, 16, 16),
    }


def test_fp16_and_tensorrt_are_accepted_for_gpu_targets_and_refused_for_cpu_ones(tiny_bert: Path) -> None:
    # Accepted on a GPU instance
    assert gpu_spec(tiny_bert, precision="fp16", engine="tensorrt").convert.precision == "fp16"
    # Refused on a CPU instance, naming the field and the reason
    with pytest.raises(SpecInvalid, match="convert.precision: fp16 is refused for CPU targets"):
        fast_spec(tiny_bert, convert={"precision": "float16"})
    with pytest.raises(SpecInvalid, match="convert.engine: engine 'tensorrt' needs a GPU target"):
        fast_spec(tiny_bert, convert={"engine": "tensorrt"})
    # TensorRT runs in code/inference.py: a mode that does not serve it is refused
    with pytest.raises(
        SpecInvalid, match="'tensorrt' is run by code/inference.py, which hosting mode 'triton'"
    ):
        parse_spec(
            {
                "name": "t",
                "hosting": {"mode": "triton", "instance_type_fallbacks": [GPU_INSTANCE]},
                "convert": {"engine": "tensorrt"},
            }
        )


def test_fp16_deberta_classifier_passes_parity_with_sensitive_ops_in_fp32(
    random_model: ModelFactory, tmp_path: Path
) -> None:
    # Given a DeBERTa-v2 classifier with a trained head's margins, on a GPU spec
    source = random_model("deberta-v2", "classification", head_std=1.0)
    # When converted to fp16
    artifact = convert_for(gpu_spec(source, task="classification", precision="fp16"), source, tmp_path)
    # Then the manifest names the fp16 file, its parity figures and the GPU requirement
    manifest = read_manifest(artifact)
    assert manifest.precision == "fp16" and manifest.onnx_file == "model.fp16.onnx"
    report = manifest.quantization
    assert report is not None and report.passed
    assert report.argmax_agreement is not None and report.argmax_agreement >= 0.95
    assert report.min_cosine >= 0.995
    assert (
        "fp16 graph on the CPU provider" in report.diagnosis
        and "fp16 storage emulated in fp32" in report.diagnosis
    )
    assert (artifact / "code" / "requirements.txt").read_text().startswith("onnxruntime-gpu==")
    # And LayerNorm and Softmax compute in fp32 (every input cast to fp32 or fp32 itself), while the
    # weights are mostly fp16
    graph = onnx.load(str(artifact / "model.fp16.onnx")).graph
    types = {i.name: i.data_type for i in graph.initializer}
    to_fp32 = {
        n.output[0]
        for n in graph.node
        if n.op_type == "Cast" and any(a.name == "to" and a.i == TensorProto.FLOAT for a in n.attribute)
    }
    sensitive = [n for n in graph.node if n.op_type in ("LayerNormalization", "Softmax")]
    assert len(sensitive) == 8  # 6 LayerNorms, 2 Softmaxes in the 2-layer model
    assert all(i in to_fp32 or types.get(i) == TensorProto.FLOAT for n in sensitive for i in n.input if i)
    projections = [n for n in graph.node if n.op_type == "MatMul" and "query_proj/" in n.name]
    assert projections and all(types.get(n.input[1]) == TensorProto.FLOAT16 for n in projections[:1])
    assert report.fp32_nodes >= len(
        relative_attention_nodes(onnx.load(str(tmp_path / "scratch" / "export.onnx")))
    )


def test_fp16_overflow_is_refused_never_shipped(random_model: ModelFactory, tmp_path: Path) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification

    # Given a DeBERTa-v2 whose feed-forward activations exceed fp16's 65504 (fine in fp32: LayerNorm
    # rescales them), as the field's fp16 DeBERTa trouble did
    source = random_model("deberta-v2", "classification", head_std=1.0)
    model = AutoModelForSequenceClassification.from_pretrained(str(source))
    with torch.no_grad():
        for layer in model.deberta.encoder.layer:
            layer.intermediate.dense.weight.mul_(3000.0)
            layer.output.dense.weight.mul_(3000.0)
    hot = tmp_path / "hot"
    model.save_pretrained(str(hot))
    for path in source.iterdir():
        if not (hot / path.name).exists():
            shutil.copy2(path, hot / path.name)
    # When converted to fp16, parity refuses it (F29) and nothing is written
    with pytest.raises(
        QuantizationCollapsed,
        match=r"fp16 refused \(fp16 storage emulated in fp32\): fp16 outputs are not finite",
    ):
        convert_for(gpu_spec(hot, task="classification", precision="fp16"), hot, tmp_path / "out")
    assert not (tmp_path / "out" / "artifact").exists()
