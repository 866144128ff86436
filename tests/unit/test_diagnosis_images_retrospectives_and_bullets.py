"""An LMI image named on a serverless endpoint (F15 against F18); a component that placed no copy where its copies
fit the instance (F09 against F10); a writer who does not know if; retrospectives, closing words and refusals as
intended; a record's empty reason one line under its status (F06); the bind-to-port label by its full key (F05); a
scale-in timeline in bullets (F13); an image's CUDA stated by its major alone beside the stall (F06 against F20)."""

from __future__ import annotations

import json

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.scale_in import timeline


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


TIMEOUT = (
    'botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.us-east-1'
    '.amazonaws.com/endpoints/rerank-sls/invocations"'
)


def test_an_lmi_image_on_a_serverless_endpoint_leaves_its_first_call_load_open() -> None:
    text = f"- 엔드포인트: serverless (MemorySizeInMB 6144), 이미지 djl-inference 0.29 cpu-full\n{TIMEOUT}\n"
    found = _diagnosed(text)
    assert found.id == "unknown" and "F18" in found.title


def test_no_copy_placed_where_the_copies_fit_the_instance_leaves_memory_open() -> None:
    text = (
        '{"InferenceComponentStatus": "Failed", "FailureReason": "Unable to place copies: insufficient resources.",'
        ' "Specification": {"ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": 1,'
        ' "MinMemoryRequiredInMb": 20480}}, "RuntimeConfig": {"DesiredCopyCount": 2, "CurrentCopyCount": 0}}\n'
        "endpoint: 1 x ml.g5.12xlarge (4 GPUs), other components on it too\n"
    )
    found = _diagnosed(text)
    assert found.id == "unknown" and "F10" in found.title
    one_gpu = text.replace("ml.g5.12xlarge (4 GPUs)", "ml.g5.xlarge").replace(
        '"DesiredCopyCount": 2', '"DesiredCopyCount": 1'
    )
    assert _diagnosed(one_gpu).id == "F09"


def test_a_writer_who_does_not_know_if_one_or_the_other() -> None:
    text = (
        "FailureReason: The primary container for production variant AllTraffic did not pass the ping health check.\n"
        "ml.c6i.xlarge, two containers. Don't know if workers died or just never finished in time.\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_retrospectives_closing_words_and_refusals_as_intended_name_nothing() -> None:
    retro = '장애 회고 (2025-03-02, 해결됨)\n증상: 로그 "Worker died." 반복, ml.c6i.xlarge co-host\n'
    answered = (
        'Q: are we hit by "error 803"?\nreply: checked the driver, no 803 anywhere.\n\nclosed as answered\n'
    )
    refused = (
        '{"EventName":"DeleteEndpoint","ErrorCode":"AccessDenied","ErrorMessage":"User: arn:aws:sts::1:assumed-role'
        '/ro/x is not authorized to perform: sagemaker:DeleteEndpoint"}\n'
        "read-only 역할이 정책대로 막힌 거라 정상. 엔드포인트 영향 없음.\n"
    )
    for text in (retro, answered, refused):
        assert _diagnosed(text).id == "unknown", text


def test_an_empty_reason_one_line_under_the_status_in_a_chat_message() -> None:
    message = (
        'Failed now, describe says:\n"EndpointStatus": "Failed",\n"FailureReason": "",\nno ProductionVariants'
    )
    text = json.dumps([{"user": "U1", "ts": "1718090011.1", "text": message}])
    assert _diagnosed(text).id == "F06"


def test_the_bind_to_port_label_by_its_full_key() -> None:
    text = (
        "FailureReason: The container image 1.dkr.ecr.us-east-1.amazonaws.com/emb:0.3 does not have the required "
        'Docker label "com.amazonaws.sagemaker.capabilities.accept-bind-to-port=true".\n'
    )
    assert _diagnosed(text).id == "F05"


def test_a_scale_in_timeline_in_bullets() -> None:
    lines = ["- 09:00 Invocations 0", "- 09:12 CurrentCopyCount 1", "- 09:29 CurrentCopyCount 0"]
    found = timeline(lines)
    assert found is not None and found.minutes == 29.0


def test_an_image_of_cuda_13_beside_the_stall_leaves_the_driver_open() -> None:
    text = (
        '{"EndpointStatus":"Failed","FailureReason":""}\n'
        "ml.g6.2xlarge, 새 이미지는 CUDA 13 기반, InferenceAmiVersion 은 안 넣음.\n"
    )
    found = _diagnosed(text)
    assert found.id == "unknown" and "F20" in found.title
    assert _diagnosed(text.replace("CUDA 13", "CUDA 12")).id == "F06"
