"""Copies short on a CPU instance are no GPU cap (F09); a log group already rotated is a log not read (F07); a
conclusion in a sentence of its own after the checks ("... 정상). 해당 사항 없음")."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_copies_short_on_a_cpu_instance_are_no_gpu_cap() -> None:
    record = (
        '{"InferenceComponentName": "bge-ic", "InferenceComponentStatus": "Failed", "FailureReason": "SageMaker was '
        'able to deploy 0 out of 1 requested copies.", "RuntimeConfig": {"DesiredCopyCount": 1, "CurrentCopyCount": 0}}'
    )
    assert _diagnosed(f"{record}\nThe endpoint runs one ml.g5.xlarge.").id == "F09"
    assert _diagnosed(f"{record}\nThe endpoint runs one ml.m5.xlarge.").id != "F09"


def test_a_log_group_already_rotated_leaves_a_failed_ping_open() -> None:
    reason = "FailureReason=The primary container for production variant AllTraffic did not pass the ping health check.\n"
    assert _diagnosed(reason).id == "F07"
    note = "on-call: log group retention was 1 day and it already rotated, can't tell why.\n"
    assert _diagnosed(reason + note).id == "unknown"


def test_a_conclusion_in_a_sentence_of_its_own_after_the_checks() -> None:
    text = (
        '[공유] llama 엔드포인트 "CUDA error 803: system has unsupported display driver / cuda driver combination" 건, '
        "AMI 올려서 해결.\n"
        "확인 결과: 우리 e5 엔드포인트는 기존 AMI 로 정상 동작 중 (에러 0). 해당 사항 없음, 참고만.\n"
    )
    assert _diagnosed(text).id == "unknown"
