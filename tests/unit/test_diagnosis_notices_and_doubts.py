"""A notice, a state machine's handlers and a checklist's [OK] name no failure; "no action for us" and "현재 장애 없음"
settle; opinions divided leave two entries open; a file name raised as a question leaves F22 open; a setup unknown to
the writer leaves a first-call timeout open; a placement reason cut off leaves F10 open."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.machine_lines import is_machine_line
from workflows.diagnosis.paste import evidence_from_paste

_TIMEOUT = (
    'botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.us-east-1'
    '.amazonaws.com/endpoints/emb/invocations"'
)


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_notice_and_a_state_machines_handlers_name_no_failure() -> None:
    notice = "\n".join(
        [
            "[공지] ML 플랫폼 변경 사항",
            "",
            "1. vLLM 이미지는 co-host 불가 - accept-bind-to-port 라벨 없음. 단독 엔드포인트로만 사용",
            "현재 장애 없음.",
        ]
    )
    assert _diagnosed(notice).id == "unknown"
    handlers = "ExecutionSucceeded\nbranches: CreateEndpoint -> WaitInService -> (Catch: CapacityStall / ResourceLimitExceeded)"
    assert _diagnosed(handlers).id != "F39"


def test_a_checklists_ok_lines_are_a_persons() -> None:
    assert not is_machine_line("[OK] CloudWatch: no Worker died since start")
    assert is_machine_line("[INFO ] W-9000 Worker died.")
    text = '[OK] CloudWatch: no "Worker died", no "Killed" since start\n[OK] Quota fine. No ResourceLimitExceeded.'
    assert _diagnosed(text).id == "unknown"


def test_no_action_for_us_settles() -> None:
    text = "\n".join(
        [
            "from the upstream thread someone posted:",
            "> An error occurred (AccessDeniedException) when calling the CreateEndpoint operation: User: arn:aws:sts::1:"
            "assumed-role/r is not authorized to perform: sagemaker:CreateEndpoint with an explicit deny in a service"
            " control policy",
            "That's their org's SCP; our deploy is InService. No action for us.",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_opinions_divided_leave_two_entries_open() -> None:
    text = "\n".join(
        [
            "ml.m5.xlarge, 컨테이너 3개",
            'FailureReason: "The primary container for production variant AllTraffic did not pass the ping health check."',
            "2026-03-12T07:20:44,870 [INFO ] W-9001-model_1.0 org.pytorch.serve.wlm.WorkerLifeCycle - Worker died.",
            "2026-03-12T07:20:44,871 [INFO ] W-9001-model_1.0 org.pytorch.serve.wlm.WorkerThread - Retry worker: 9001 in 1 seconds.",
            '담당자 의견 갈림: "인스턴스가 작다" vs "worker 수 줄이면 된다"',
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_a_file_name_raised_as_a_question_leaves_the_missing_file_open() -> None:
    log = "E0312 08:02:31.240 1 model_lifecycle.cc:642] failed to load 'bge' version 1: Internal: failed to stat file /opt/ml/model/bge/1/model.onnx"
    assert _diagnosed(log).id == "F22"
    asked = f"{log}\n빈 폴더로 패킹된 건지, 파일 이름을 bge.onnx 로 넣은 건지 tar tvf 해봐야 알 듯"
    assert _diagnosed(asked).id == "unknown"


def test_a_setup_unknown_to_the_writer_leaves_a_first_call_timeout_open() -> None:
    assert _diagnosed(f"{_TIMEOUT}\n한참 안 쓰다가 처음 호출함").id == "F15"
    assert _diagnosed(f"{_TIMEOUT}\n배포는 다른 파트에서 함, 설정 모름. 두 번째부터는 17 ms").id == "unknown"
    assert _diagnosed(f"{_TIMEOUT}\nsomeone else set it up; I only have the endpoint name").id == "unknown"


def test_a_placement_reason_cut_off_mid_sentence_leaves_memory_open() -> None:
    text = "\n".join(
        [
            "InferenceComponentStatus: Failed",
            "FailureReason: 'Unable to place the inference component: ...'",
            "RuntimeConfig:",
            "  CurrentCopyCount: 0",
            "  DesiredCopyCount: 1",
            "endpoint: ml.g5.xlarge x1, another component already holds its GPU",
        ]
    )
    assert _diagnosed(text).id == "unknown"
