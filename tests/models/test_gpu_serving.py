"""GPU serving code without a GPU: the provider check (F36), TensorRT options, I/O binding, the CPU stand-in."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.support.gpu import convert_for, gpu_spec, provider_and_note
from workflows.container.cpu_stand_in import NOTE, STAND_IN_ENV, serve_on_cpu
from workflows.conversion.manifest import MANIFEST_FILE
from workflows.gpu.device import PROVIDERS

GPU_SERVING = {
    "device": "gpu",
    "engine": "cuda",
    "requirement": "onnxruntime-gpu==1.31.1",
    "cuda_major": 12,
    "cudnn_major": 9,
}


@pytest.fixture(scope="module")
def inference() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "inference_gpu_under_test", ROOT / "artifacts" / "code" / "inference.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.fixture(scope="module")
def gpu_artifact(tiny_bert: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny BERT converted for a GPU realtime spec (ml.g5.xlarge)."""
    return convert_for(gpu_spec(tiny_bert), tiny_bert, tmp_path_factory.mktemp("gpu-artifact"))


def test_the_serving_code_and_deploybench_share_the_provider_table(inference: ModuleType) -> None:
    # Then the provider order and the stand-in variable are the same on both sides of the container
    assert inference.PROVIDERS == PROVIDERS
    assert inference.CPU_STAND_IN_ENV == STAND_IN_ENV


def test_a_cpu_fallback_of_the_cuda_provider_is_refused_naming_the_missing_library(
    inference: ModuleType,
) -> None:
    # Given onnxruntime-gpu installed but the session fell back to the CPU (this machine has no CUDA)
    available = ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]
    # When the serving code checks the session's providers
    with pytest.raises(RuntimeError) as refused:
        inference.check_provider("CUDAExecutionProvider", ["CPUExecutionProvider"], available, GPU_SERVING)
    # Then it refuses to serve, names F36 and the CUDA libraries that do not load here
    message = str(refused.value)
    assert "must run on CUDAExecutionProvider, but onnxruntime runs ['CPUExecutionProvider']" in message
    assert "(F36)" in message
    assert "libcudart.so.12" in message and "libcudnn.so.9" in message


def test_the_cpu_package_on_a_gpu_is_refused_naming_onnxruntime_gpu(inference: ModuleType) -> None:
    # Given the CPU onnxruntime (no CUDA provider at all)
    with pytest.raises(RuntimeError) as refused:
        inference.check_provider(
            "CUDAExecutionProvider",
            ["CPUExecutionProvider"],
            ["AzureExecutionProvider", "CPUExecutionProvider"],
            GPU_SERVING,
        )
    # Then the missing piece named is the GPU package, pinned
    assert "onnxruntime-gpu (the installed onnxruntime has no CUDAExecutionProvider" in str(refused.value)
    assert "must install onnxruntime-gpu==1.31.1 and not onnxruntime" in str(refused.value)


def test_tensorrt_falling_back_to_cuda_is_refused_too(inference: ModuleType) -> None:
    # Given TensorRT asked for, CUDA running (TensorRT's libraries missing)
    serving = {**GPU_SERVING, "engine": "tensorrt"}
    with pytest.raises(RuntimeError) as refused:
        inference.check_provider(
            "TensorrtExecutionProvider",
            ["CUDAExecutionProvider", "CPUExecutionProvider"],
            ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"],
            serving,
        )
    assert "libnvinfer.so.10" in str(refused.value)


def test_the_requested_provider_first_is_served(inference: ModuleType) -> None:
    # When the requested provider is the session's first, nothing is raised
    inference.check_provider(
        "CUDAExecutionProvider",
        ["CUDAExecutionProvider", "CPUExecutionProvider"],
        ["CUDAExecutionProvider"],
        GPU_SERVING,
    )


def test_tensorrt_session_options(inference: ModuleType, tmp_path: Path) -> None:
    # Given an fp16 TensorRT artifact with a profile per benchmark shape
    profiles = [
        {
            "shape": "b1/natural",
            "min_batch": 1,
            "max_batch": 1,
            "min_length": 1,
            "opt_length": 32,
            "max_length": 256,
        },
        {
            "shape": "b8/128",
            "min_batch": 1,
            "max_batch": 8,
            "min_length": 128,
            "opt_length": 128,
            "max_length": 128,
        },
    ]
    manifest = {
        "inputs": ["input_ids", "attention_mask"],
        "precision": "fp16",
        "serving": {**GPU_SERVING, "engine": "tensorrt", "tensorrt_profiles": profiles},
    }
    # When the serving code plans its session
    engine, providers, note = inference.execution_plan(manifest, str(tmp_path), environ={})
    # Then TensorRT comes first with its cache under the model folder, fp16, and one profile per shape
    assert engine == "tensorrt" and note is None
    assert [name for name, _ in providers] == PROVIDERS["tensorrt"]
    options = providers[0][1]
    cache = str(tmp_path / "tensorrt-cache")
    assert options["trt_engine_cache_enable"] == "True" and options["trt_engine_cache_path"] == cache
    assert options["trt_timing_cache_enable"] == "True" and options["trt_timing_cache_path"] == cache
    assert options["trt_fp16_enable"] == "True"
    assert (
        options["trt_profile_min_shapes"]
        == "input_ids:1x1,attention_mask:1x1,input_ids:1x128,attention_mask:1x128"
    )
    assert (
        options["trt_profile_opt_shapes"]
        == "input_ids:1x32,attention_mask:1x32,input_ids:8x128,attention_mask:8x128"
    )
    assert (
        options["trt_profile_max_shapes"]
        == "input_ids:1x256,attention_mask:1x256,input_ids:8x128,attention_mask:8x128"
    )
    # And an fp32 artifact does not ask TensorRT for fp16
    fp32 = inference.execution_plan({**manifest, "precision": "fp32"}, str(tmp_path), environ={})[1]
    assert fp32[0][1]["trt_fp16_enable"] == "False"


def test_a_cpu_artifact_keeps_the_plain_cpu_provider(inference: ModuleType, tmp_path: Path) -> None:
    # A CPU artifact (or an old manifest without a serving plan) is unchanged: the CPU provider alone
    assert inference.execution_plan(
        {"inputs": ["input_ids"]}, str(tmp_path), environ={STAND_IN_ENV: "x"}
    ) == (
        "cpu",
        ["CPUExecutionProvider"],
        None,
    )


def test_io_binding_gives_the_outputs_of_session_run(inference: ModuleType, tiny_artifact: Path) -> None:
    # Given the tiny BERT's session and a padded batch
    manifest = json.loads((tiny_artifact / MANIFEST_FILE).read_text())
    session = inference._session(str(tiny_artifact / manifest["onnx_file"]), ["CPUExecutionProvider"])
    ids = np.array([[101, 2023, 2003, 102, 0], [101, 2178, 102, 0, 0]], dtype=np.int64)
    feed = {
        "input_ids": ids,
        "attention_mask": (ids > 0).astype(np.int64),
        "token_type_ids": np.zeros_like(ids),
    }
    feed = {k: v for k, v in feed.items() if k in {i.name for i in session.get_inputs()}}
    # When run through I/O binding (bound to the CPU device here; "cuda" on a GPU) and plainly
    bound = inference.run_graph(session, feed, "cpu")
    plain = inference.run_graph(session, feed)
    # Then both give the same output
    np.testing.assert_allclose(bound, plain, rtol=0, atol=0)


def test_a_gpu_artifact_refuses_to_serve_without_a_gpu(
    inference: ModuleType, gpu_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the GPU artifact, loaded with the real (CPU) onnxruntime and no stand-in note
    monkeypatch.delenv(STAND_IN_ENV, raising=False)
    # When the container calls model_fn, onnxruntime falls back to the CPU; the serving code refuses
    with pytest.raises(
        RuntimeError,
        match=r"must run on CUDAExecutionProvider, but onnxruntime runs \['CPUExecutionProvider'\]",
    ):
        inference.model_fn(str(gpu_artifact))


def test_the_stand_in_serves_a_gpu_artifact_on_cpu_and_says_so(
    inference: ModuleType,
    gpu_artifact: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given the GPU artifact unpacked on the local SageMaker (no GPU)
    model_dir = tmp_path / "model"
    shutil.copytree(gpu_artifact, model_dir)
    note = serve_on_cpu(model_dir)
    # Then the stand-in swaps the CUDA 12 pin for the CPU build of the conversion's version, and says so
    assert note is not None and note.startswith(NOTE) and "requested CUDAExecutionProvider" in note
    assert (gpu_artifact / "code" / "requirements.txt").read_text().strip() == "onnxruntime-gpu==1.26.0"
    converted = json.loads((gpu_artifact / MANIFEST_FILE).read_text())["onnxruntime_version"]
    assert f"onnxruntime-gpu==1.26.0 is installed as onnxruntime=={converted}, the conversion's" in note
    assert (model_dir / "code" / "requirements.txt").read_text() == f"onnxruntime=={converted}\n"
    # When the serving code loads it with the container's note
    monkeypatch.setenv(STAND_IN_ENV, NOTE)
    model = inference.model_fn(str(model_dir))
    # Then the log line and every answer name the CPU provider and the note
    assert (
        f"provider CPUExecutionProvider (session providers ['CPUExecutionProvider']; GPU artifact served on CPU: {NOTE})"
        in capsys.readouterr().out
    )
    data = inference.input_fn(json.dumps({"inputs": ["a short text"]}), "application/json")
    answer: dict[str, Any] = json.loads(
        inference.output_fn(inference.predict_fn(data, model), "application/json")
    )
    assert provider_and_note(answer["served_by"]) == {"provider": "CPUExecutionProvider", "note": NOTE}
    assert len(answer["embeddings"]) == 1


def test_the_stand_in_leaves_a_cpu_artifact_alone(tiny_artifact: Path, tmp_path: Path) -> None:
    model_dir = tmp_path / "model"
    shutil.copytree(tiny_artifact, model_dir)
    assert serve_on_cpu(model_dir) is None
    assert (model_dir / "code" / "requirements.txt").read_text() == (
        tiny_artifact / "code" / "requirements.txt"
    ).read_text()
