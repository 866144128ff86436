"""Preflight checks for images, scale to zero and engines (Triton, vLLM, LMI), on plain inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.preflight import HF_CPU, HF_GPU, ids
from workflows.images.table import image_cuda
from workflows.preflight import containers, scaling, triton, vllm

TRITON = "763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:26.05-py3"
VLLM = "763104351884.dkr.ecr.us-east-1.amazonaws.com/vllm:0.26.0-gpu-py312-cu129-ubuntu22.04-sagemaker"


# --- images: F05, F20 ----------------------------------------------------------------------------


def table_with(monkeypatch: pytest.MonkeyPatch, families: dict[str, Any]) -> None:
    from workflows.images import table as images
    from workflows.images.table import image_records, image_table

    table = {**image_table(), "families": {**image_table()["families"], **families}}
    monkeypatch.setattr(
        images, "image_records", lambda node=None: image_records(table if node is None else node)
    )


def test_f05_labels_from_the_image_table(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the field's label table: HF inference has accept-bind-to-port, vLLM has not
    table_with(
        monkeypatch,
        {
            "vllm": {
                "gpu": {
                    "repository": "vllm",
                    "tag": "0.26.0-gpu-py312-cu129-ubuntu22.04-sagemaker",
                    "labels": {"accept-bind-to-port": False, "multi-models": False},
                }
            }
        },
    )
    # Then a multi-container endpoint with the vLLM image is blocked, HF passes
    assert ids(containers.check_image_labels(images=[HF_CPU, VLLM])) == [("F05", "blocking")]
    assert containers.check_image_labels(images=[HF_CPU, HF_GPU]) == []


def test_f05_an_image_the_table_does_not_describe_is_a_warning() -> None:
    # Given an image with no labels in the table
    findings = containers.check_image_labels(images=["123456789012.dkr.ecr.us-east-1.amazonaws.com/mine:1"])
    # Then it cannot be verified: a warning telling how to read the label
    assert ids(findings) == [("F05", "warning")]
    assert "batch-get-image" in findings[0].fix


def test_f20_cuda_13_image_needs_the_580_ami(monkeypatch: pytest.MonkeyPatch) -> None:
    table_with(
        monkeypatch,
        {"triton": {"gpu": {"repository": "sagemaker-tritonserver", "tag": "26.05-py3", "cuda": "13.2"}}},
    )
    # Given Triton 26.05 (CUDA 13.2) on ml.g5.xlarge with the default AMI
    default = containers.check_cuda_driver(instance_type="ml.g5.xlarge", image=TRITON, ami_version=None)
    # Then error 803 is predicted, and the fix is the field's AMI
    assert ids(default) == [("F20", "blocking")]
    assert "al2023-ami-sagemaker-inference-gpu-4-1" in default[0].fix
    # And with that AMI it runs in forward compatibility: a warning to re-verify on tag changes
    fixed = containers.check_cuda_driver(
        instance_type="ml.g5.xlarge", image=TRITON, ami_version="al2023-ami-sagemaker-inference-gpu-4-1"
    )
    assert ids(fixed) == [("F20", "warning")]
    assert "forward compatibility" in fixed[0].message
    # And an older AMI is still blocked
    older = containers.check_cuda_driver(
        instance_type="ml.g5.xlarge", image=TRITON, ami_version="al2-ami-sagemaker-inference-gpu-3-1"
    )
    assert ids(older) == [("F20", "blocking")]
    assert containers.minimum_ami((13, 2)) is not None
    assert containers.minimum_ami((13, 2)).name == "al2023-ami-sagemaker-inference-gpu-4-1"  # type: ignore[union-attr]


def test_f20_hf_cuda_12_image() -> None:
    # Given the HF GPU DLC (cu124)
    assert image_cuda(HF_GPU) == (12, 4)
    # Then on g6 (535, CUDA 12.2) it relies on forward compatibility; with gpu-3-1 (CUDA 12.4) it is native
    on_g6 = containers.check_cuda_driver(instance_type="ml.g6.xlarge", image=HF_GPU, ami_version=None)
    assert ids(on_g6) == [("F20", "warning")]
    assert "al2-ami-sagemaker-inference-gpu-3-1" in on_g6[0].fix
    native = containers.check_cuda_driver(
        instance_type="ml.g6.xlarge", image=HF_GPU, ami_version="al2-ami-sagemaker-inference-gpu-3-1"
    )
    assert native == []
    # And CPU instances have no driver to check; an image of unknown CUDA is a warning
    assert containers.check_cuda_driver(instance_type="ml.c6i.xlarge", image=HF_GPU, ami_version=None) == []
    unknown = containers.check_cuda_driver(
        instance_type="ml.g5.xlarge", image="acct/mine:latest", ami_version=None
    )
    assert ids(unknown) == [("F20", "warning")]


# --- scale to zero: F11, F12 ---------------------------------------------------------------------


def test_f11_scale_to_zero_needs_all_three_pieces() -> None:
    # Given MinInstanceCount 0 with pieces missing
    nothing = scaling.check_scale_to_zero(
        min_instance_count=0, scalable_target_min_capacity=None, has_scaling_policy=False
    )
    min_one = scaling.check_scale_to_zero(
        min_instance_count=0, scalable_target_min_capacity=1, has_scaling_policy=True
    )
    # Then each gap is named; all three present, or no scale to zero, pass
    assert ids(nothing) == [("F11", "blocking")]
    assert "no scalable target" in nothing[0].message and "no scaling policy" in nothing[0].message
    assert "MinCapacity is 1" in min_one[0].message
    assert (
        scaling.check_scale_to_zero(
            min_instance_count=0, scalable_target_min_capacity=0, has_scaling_policy=True
        )
        == []
    )
    assert (
        scaling.check_scale_to_zero(
            min_instance_count=1, scalable_target_min_capacity=None, has_scaling_policy=False
        )
        == []
    )


def test_f12_the_no_capacity_alarm_must_match_the_field() -> None:
    field_alarm = {
        **scaling.NO_CAPACITY_ALARM,
        "AlarmActions": ["arn:aws:autoscaling:...:scalingPolicy:step"],
    }
    # Then the field's alarm with a step-scaling action passes
    assert scaling.check_no_capacity_alarm(alarm=field_alarm, action_policy_type="StepScaling") == []
    # And no alarm, a different period, or a target-tracking action are blocked
    assert ids(scaling.check_no_capacity_alarm(alarm=None, action_policy_type=None)) == [("F12", "blocking")]
    slow = scaling.check_no_capacity_alarm(
        alarm={**field_alarm, "Period": 60}, action_policy_type="StepScaling"
    )
    assert "Period=60" in slow[0].message
    tracking = scaling.check_no_capacity_alarm(alarm=field_alarm, action_policy_type="TargetTrackingScaling")
    assert "not StepScaling" in tracking[0].message


# --- Triton: F19, F22, F23 ------------------------------------------------------------------------

GOOD_CONFIG = """name: "nli"
backend: "onnxruntime"
max_batch_size: 32
input [
  { name: "input_ids", data_type: TYPE_INT64, dims: [ -1 ] },
  { name: "attention_mask", data_type: TYPE_INT64, dims: [ -1 ] }
]
output [ { name: "logits", data_type: TYPE_FP32, dims: [ 3 ] } ]
"""


def test_f19_a_config_joined_with_newlines_does_not_parse() -> None:
    # Given the field's generator bug: list elements joined with "\n" instead of ",\n"
    broken = GOOD_CONFIG.replace(
        'dims: [ -1 ] },\n  { name: "attention_mask"', 'dims: [ -1 ] }\n  { name: "attention_mask"'
    )
    # Then the real ModelConfig parser refuses it with line:column; the comma-joined one parses
    findings = triton.check_config_syntax(broken, origin="nli/config.pbtxt")
    assert ids(findings) == [("F19", "blocking")]
    assert 'Expected ","' in findings[0].message
    assert triton.check_config_syntax(GOOD_CONFIG, origin="nli/config.pbtxt") == []


def model_repo(tmp_path: Path, config: str, files: dict[str, int]) -> Path:
    folder = tmp_path / "repo" / "nli"
    (folder / "1").mkdir(parents=True)
    (folder / "config.pbtxt").write_text(config, encoding="utf-8")
    for name, size in files.items():
        (folder / "1" / name).write_bytes(b"\0" * size)
    return tmp_path / "repo"


def test_f23_file_name_must_match_the_backend(tmp_path: Path) -> None:
    # Given an onnxruntime model whose file is named after its precision
    repo = model_repo(tmp_path, GOOD_CONFIG, {"model_fp32.onnx": 2_000_000})
    # Then the backend would not find it
    findings = triton.check_repository(repo)
    assert ids(findings) == [("F23", "blocking")]
    assert "model.onnx" in findings[0].fix


def test_f22_empty_or_truncated_version_folder(tmp_path: Path) -> None:
    # Given an interrupted download: an empty version folder, or a 10-byte model.onnx
    empty = triton.check_repository(model_repo(tmp_path / "a", GOOD_CONFIG, {}))
    tiny = triton.check_repository(model_repo(tmp_path / "b", GOOD_CONFIG, {"model.onnx": 10}))
    whole = triton.check_repository(model_repo(tmp_path / "c", GOOD_CONFIG, {"model.onnx": 2_000_000}))
    # Then both are F22; a whole file passes
    assert ids(empty) == [("F22", "blocking")]
    assert ids(tiny) == [("F22", "blocking")]
    assert whole == []


def test_python_backend_and_default_model_filename(tmp_path: Path) -> None:
    python = GOOD_CONFIG.replace('backend: "onnxruntime"', 'backend: "python"')
    renamed = GOOD_CONFIG + 'default_model_filename: "nli.onnx"\n'
    # Then a small model.py is fine, and default_model_filename names the file to look for
    assert triton.check_repository(model_repo(tmp_path / "p", python, {"model.py": 800})) == []
    assert triton.check_repository(model_repo(tmp_path / "r", renamed, {"nli.onnx": 2_000_000})) == []


# --- vLLM: F25, F26 ------------------------------------------------------------------------------


def test_f25_architecture_support() -> None:
    # Then DeBERTa-v2 is refused, XLM-R passes, an unknown architecture warns
    assert ids(vllm.check_architecture("DebertaV2ForSequenceClassification")) == [("F25", "blocking")]
    assert vllm.check_architecture("XLMRobertaForSequenceClassification") == []
    assert ids(vllm.check_architecture("FancyNewEncoderModel")) == [("F25", "warning")]


def test_f26_the_dlc_must_be_told_what_to_serve() -> None:
    good = {
        "SM_VLLM_MODEL": "joeddav/xlm-roberta-large-xnli",
        "SM_VLLM_RUNNER": "pooling",
        "SM_VLLM_CONVERT": "classify",
        "SM_VLLM_MAX_MODEL_LEN": "512",
    }
    # Then the field's environment passes; without SM_VLLM_MODEL (CLI args ignored) it is blocked
    assert (
        vllm.check_environment(environment=good, model_id=good["SM_VLLM_MODEL"], task="classification") == []
    )
    missing = vllm.check_environment(
        environment={k: v for k, v in good.items() if k != "SM_VLLM_MODEL"},
        model_id=good["SM_VLLM_MODEL"],
        task="classification",
    )
    assert ids(missing) == [("F26", "blocking")]
    assert "SM_VLLM_MODEL is not set" in missing[0].message
    wrong = vllm.check_environment(environment=good, model_id=good["SM_VLLM_MODEL"], task="embedding")
    assert "SM_VLLM_CONVERT='classify', expected 'embed'" in wrong[0].message
