"""A GPU spec on the local SageMaker (no GPU): served on CPU and labelled CPU, in the log, the answer,
the warmup result and the report header (light server)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.gpu import GPU_INSTANCE, convert_for, gpu_spec, provider_and_note
from tests.support.local_sagemaker import (
    ONE_TEXT,
    container,
    deploy,
    endpoint_settled,
    log_text,
    runtime,
    upload_artifact,
    wait_for,
)
from workflows.container.cpu_stand_in import NOTE
from workflows.gpu.served_by import served_by
from workflows.local.engine import LocalEngine
from workflows.reports.markdown import render_report


def test_a_gpu_artifact_is_served_on_cpu_locally_and_says_so(
    engine: LocalEngine, tiny_bert: Path, tmp_path: Path
) -> None:
    # Given the tiny BERT converted for ml.g5.xlarge (onnxruntime-gpu, CUDA provider)
    artifact = convert_for(gpu_spec(tiny_bert), tiny_bert, tmp_path / "gpu")
    # pinning the newest onnxruntime-gpu built for the DLC's CUDA 12 (1.27 and later link CUDA 13)
    assert (artifact / "code" / "requirements.txt").read_text().strip() == "onnxruntime-gpu==1.26.0"
    uri = upload_artifact(engine, artifact, "models/gpu/model.tar.gz", tmp_path)
    sagemaker = engine.client("sagemaker")
    # When it is deployed on a GPU instance type of the local SageMaker
    deploy(sagemaker, "ep-gpu", {"PrimaryContainer": container(uri)}, instance_type=GPU_INSTANCE)
    final = endpoint_settled(sagemaker, "ep-gpu")[-1]
    # Then it serves (on CPU), and every answer says so
    assert final["EndpointStatus"] == "InService", final.get("FailureReason")
    answer = json.loads(
        runtime(engine)
        .invoke_endpoint(EndpointName="ep-gpu", Body=ONE_TEXT, ContentType="application/json")["Body"]
        .read()
    )
    assert provider_and_note(answer["served_by"]) == {"provider": "CPUExecutionProvider", "note": NOTE}
    # And the warmup's probe records it for result.json
    assert provider_and_note(served_by(runtime(engine), "ep-gpu")) == {
        "provider": "CPUExecutionProvider",
        "note": NOTE,
    }
    # And the endpoint log says it, from the local SageMaker and from the serving code
    text = wait_for(
        lambda: {"text": log_text(engine, "/aws/sagemaker/Endpoints/ep-gpu")},
        lambda d: "deploybench: provider CPUExecutionProvider" in d["text"],
        timeout_s=30,
    )[-1]["text"]
    assert f"deploybench local SageMaker: {NOTE} (requested CUDAExecutionProvider)" in text
    assert "code/requirements.txt's onnxruntime-gpu==1.26.0 is installed as onnxruntime==" in text
    assert f"GPU artifact served on CPU: {NOTE}" in text
    sagemaker.delete_endpoint(EndpointName="ep-gpu")


def test_the_report_header_names_the_provider() -> None:
    result = {
        "status": "succeeded",
        "schema_version": 2,
        "run_id": "r1",
        "hosting": {"mode": "realtime", "instance_type": GPU_INSTANCE},
        "warmup": {"shapes": [], "served_by": {"provider": "CPUExecutionProvider", "note": NOTE}},
    }
    report = render_report(result)
    header = report.split("\n## ", 1)[0]
    assert f"- execution provider: **CPUExecutionProvider** — {NOTE}" in header


def test_the_report_records_tensorrt_build_time_per_shape_apart_from_warm_latency() -> None:
    # Given a TensorRT artifact's warmup: b1's first call built its engine (47.7 s in the field), b8 timed out first
    shapes = [
        {
            "batch_size": 1,
            "sequence_length": "natural",
            "requests": 20,
            "first_ms": 47700.0,
            "time_to_first_success_s": 47.7,
            "last_ms": 16.0,
            "stable": True,
        },
        {
            "batch_size": 8,
            "sequence_length": 128,
            "requests": 25,
            "first_ms": 60000.0,
            "first_error": "ModelError",
            "time_to_first_success_s": 75.0,
            "last_ms": 42.0,
            "stable": True,
        },
    ]
    result = {
        "status": "succeeded",
        "schema_version": 2,
        "convert": {"manifest": None},
        "warmup": {"shapes": shapes},
    }
    assert "TensorRT engine builds" not in render_report(result)  # no TensorRT artifact, no section
    result["convert"] = {
        "manifest": {
            "onnx_file": "model.fp16.onnx",
            "architecture": "DebertaV2ForSequenceClassification",
            "precision": "fp16",
            "optimization": "fp16 of the plain export",
            "parity": {"max_abs_diff": 1e-7, "min_cosine": 1.0},
            "serving": {"engine": "tensorrt"},
        }
    }
    report = render_report(result)
    section = report.split("## TensorRT engine builds", 1)[1].split("\n## ", 1)[0]
    # Then each shape's build time stands apart from its warm latency
    assert "| b1/natural | 47700.00 | - | 47.70 | 47.68 | 16.00 |" in section
    assert "| b8/128 | 60000.00 | ModelError | 75.00 | 74.96 | 42.00 |" in section
