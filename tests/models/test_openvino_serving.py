"""CPU artifacts served by OpenVINO: the plan, the requirements, and the real CPU plugin serving them."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import onnx
import pytest

from tests.conftest import convert_folder
from tests.support.gpu import GPU_INSTANCE
from tests.support.tasks import serving_code
from workflows.benchmark.texts import natural_texts
from workflows.conversion.manifest import read_manifest
from workflows.errors import SpecInvalid
from workflows.gpu.device import OPENVINO_REQUIREMENT
from workflows.gpu.plan import serving_plan
from workflows.reports.markdown import render_report
from workflows.spec.pipeline import parse_spec


def cpu_flags() -> set[str]:
    line = next(x for x in Path("/proc/cpuinfo").read_text().splitlines() if x.startswith("flags"))
    return set(line.split(":", 1)[1].split())


@pytest.fixture(scope="module")
def inference() -> ModuleType:
    return serving_code()


@pytest.fixture(scope="module")
def openvino_artifact(tiny_bert: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return convert_folder(tiny_bert, tmp_path_factory.mktemp("openvino"), engine="openvino")


def embed(inference: ModuleType, model: Any, texts: list[str]) -> tuple[np.ndarray, dict[str, str]]:
    body = json.dumps({"inputs": texts, "parameters": {"batch_size": len(texts)}})
    answer = inference.predict_fn(inference.input_fn(body, "application/json"), model)
    return np.asarray(answer["embeddings"]), answer["served_by"]


def test_engine_openvino_plans_openvino_beside_onnxruntime_on_a_cpu() -> None:
    # Given a CPU spec asking for OpenVINO, and one forcing f32
    spec = parse_spec({"name": "ov", "convert": {"engine": "openvino"}})
    forced = parse_spec({"name": "ov", "convert": {"engine": "openvino", "inference_precision": "f32"}})
    # When the convert step plans the serving
    plan, forced_plan = serving_plan(spec, "1.31.1"), serving_plan(forced, "1.31.1")
    # Then OpenVINO runs it, pinned beside onnxruntime, precision left to the CPU unless forced
    assert (plan.runtime, plan.runtime_requirement, plan.inference_precision) == (
        "openvino",
        OPENVINO_REQUIREMENT,
        "",
    )
    assert plan.requirement == "onnxruntime==1.31.1"
    assert forced_plan.inference_precision == "f32"
    assert serving_plan(parse_spec({"name": "ort"}), "1.31.1").runtime == "onnxruntime"


def test_engine_openvino_is_refused_for_a_gpu_target() -> None:
    # Given a GPU instance type with engine openvino, When parsed, Then refused with the fix
    with pytest.raises(SpecInvalid, match="engine .openvino. needs a CPU target"):
        parse_spec(
            {
                "name": "ov",
                "convert": {"engine": "openvino"},
                "hosting": {"instance_type_fallbacks": [GPU_INSTANCE]},
            }
        )


@pytest.mark.parametrize(
    ("graph", "compute", "label"),
    [
        ("fp32", "f32", "fp32"),
        ("fp32", "bf16", "bf16"),
        ("int8", "f32", "int8"),
        ("int8", "int8", "int8"),
        ("int8", "bf16", "int8+bf16"),
    ],
)
def test_the_served_precision_is_what_was_computed(
    inference: ModuleType, graph: str, compute: str, label: str
) -> None:
    assert inference.served_precision(graph, compute) == label


def test_openvino_serves_the_plain_export_and_says_how(
    inference: ModuleType, openvino_artifact: Path, tiny_artifact: Path
) -> None:
    # Given the same model converted for OpenVINO and for onnxruntime
    manifest = read_manifest(openvino_artifact)
    requirements = (openvino_artifact / "code" / "requirements.txt").read_text().split()
    # When both serve the same texts through the serving code
    texts = natural_texts(5, seed=48)
    served, served_by = embed(inference, inference.model_fn(str(openvino_artifact)), texts)
    reference, reference_by = embed(inference, inference.model_fn(str(tiny_artifact)), texts)
    # Then OpenVINO served the plain export (no onnxruntime contrib operators) and says so, with
    # the precision its CPU plugin computed in: bf16 where the CPU has AVX512-BF16 or AMX
    assert manifest.serving.runtime == "openvino" and manifest.optimization.startswith("none")
    assert requirements == ["onnxruntime==1.31.1", OPENVINO_REQUIREMENT]
    assert served_by["runtime"].startswith("openvino 2026.4.1")
    bf16 = bool(cpu_flags() & {"avx512_bf16", "amx_bf16"})
    assert served_by["precision"] == ("bf16" if bf16 else "fp32")
    assert reference_by["runtime"].startswith("onnxruntime") and reference_by["precision"] == "fp32"
    cosine = np.sum(served * reference, axis=1) / (
        np.linalg.norm(served, axis=1) * np.linalg.norm(reference, axis=1)
    )
    assert served.shape == reference.shape
    assert cosine.min() >= 0.999


def test_openvino_threads_are_not_pinned_to_cores(
    inference: ModuleType, openvino_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given two threads asked for, When the OpenVINO artifact loads, Then its compiled model runs
    # two unpinned threads (the plugin's Linux default would pin them)
    monkeypatch.setenv("ORT_INTRA_OP_THREADS", "2")
    compiled = inference.model_fn(str(openvino_artifact))["session"].compiled
    assert compiled.get_property("INFERENCE_NUM_THREADS") == 2
    assert compiled.get_property("ENABLE_CPU_PINNING") is False


def test_the_report_header_names_the_runtime_and_the_precision() -> None:
    # Given a run whose warm endpoint answered from OpenVINO in bf16
    served = {"runtime": "openvino 2026.4.1", "provider": "OpenVINO CPU", "precision": "bf16"}
    result = {
        "status": "succeeded",
        "schema_version": 2,
        "run_id": "r1",
        "hosting": {"mode": "realtime", "instance_type": "ml.c7i.xlarge"},
        "warmup": {"shapes": [], "served_by": served},
    }
    # When the report is written, Then its header says what served and in which precision
    header = render_report(result).split("\n## ", 1)[0]
    assert "- execution provider: **OpenVINO CPU** (openvino 2026.4.1, computing in bf16)" in header


def test_int8_on_openvino_is_static_and_served_by_its_int8_kernels(
    inference: ModuleType, tiny_bert: Path, tiny_artifact: Path, tmp_path: Path
) -> None:
    # Given the tiny BERT converted to INT8 for OpenVINO
    artifact = convert_folder(tiny_bert, tmp_path, engine="openvino", precision="int8")
    manifest = read_manifest(artifact)
    graph = onnx.load(str(artifact / manifest.onnx_file))
    # When it serves texts through the serving code
    texts = natural_texts(5, seed=49)
    served, served_by = embed(inference, inference.model_fn(str(artifact)), texts)
    reference, _ = embed(inference, inference.model_fn(str(tiny_artifact)), texts)
    # Then the graph is static INT8 (QDQ pairs OpenVINO runs as INT8, no dynamic quantization, which
    # OpenVINO runs as fp32), the guard passed it, and OpenVINO says it served INT8
    ops = {node.op_type for node in graph.graph.node}
    assert "QuantizeLinear" in ops and "DynamicQuantizeLinear" not in ops and "MatMulInteger" not in ops
    assert manifest.quantization is not None and manifest.quantization.passed
    assert manifest.quantization.method.startswith("static INT8 for OpenVINO")
    assert manifest.serving.runtime == "openvino" and manifest.precision == "int8"
    assert not manifest.warnings
    assert served_by["runtime"].startswith("openvino") and served_by["precision"].startswith("int8")
    cosine = np.sum(served * reference, axis=1) / (
        np.linalg.norm(served, axis=1) * np.linalg.norm(reference, axis=1)
    )
    assert cosine.min() >= manifest.quantization.thresholds["min_cosine"]
