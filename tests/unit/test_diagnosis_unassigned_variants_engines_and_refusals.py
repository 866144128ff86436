"""A Failed endpoint whose variants hold no instance is the stall (F06); TensorRT's engine built "a new" (F21); the
bind-to-port label said to be required (F05); a GPU type refused for Direct mode in other words (F04)."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_failed_endpoint_whose_variants_hold_no_instance_is_the_stall() -> None:
    record = (
        '{"EndpointName": "emb-g6", "EndpointStatus": "Failed", "FailureReason": "", "ProductionVariants": '
        '[{"VariantName": "AllTraffic", "CurrentInstanceCount": %d, "DesiredInstanceCount": 1}]}'
    )
    assert _diagnosed(record % 0).id == "F06"
    assert _diagnosed(record % 1).id != "F06"


def test_tensorrts_engine_built_a_new() -> None:
    text = (
        "onnxruntime-gpu with TensorrtExecutionProvider on ml.g5.xlarge\n"
        "[TensorRT EP] Building a new TensorRT engine for input shape input_ids:[1,64]\n"
        "first call of each new length ~40 s, repeats 6 ms\n"
    )
    assert _diagnosed(text).id == "F21"


def test_the_bind_to_port_label_said_to_be_required() -> None:
    text = (
        "Error: unexpected state 'Failed'. last error: The container image 1.dkr.ecr.eu-west-1.amazonaws.com/e:0.4 "
        "does not support multi-container endpoints. The image must have the Docker label "
        "com.amazonaws.sagemaker.capabilities.accept-bind-to-port=true.\n"
    )
    assert _diagnosed(text).id == "F05"
    added = "We added LABEL com.amazonaws.sagemaker.capabilities.accept-bind-to-port=true and it deployed.\n"
    assert _diagnosed(added).id != "F05"


def test_a_gpu_type_refused_for_direct_mode_in_other_words() -> None:
    text = (
        'Resource handler returned message: "Invalid request provided: Instance type ml.g5.xlarge is not supported '
        'for multi-container endpoints with InferenceExecutionMode Direct."\n'
    )
    assert _diagnosed(text).id == "F04"
    cpu = text.replace("ml.g5.xlarge", "ml.c6i.xlarge")
    assert _diagnosed(cpu).id != "F04"
