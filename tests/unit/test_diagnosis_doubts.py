"""Evidence that argues against an entry without denying its message: requirements that list the module an import
error names, a component that has not placed a copy yet, a responder who calls the alert a false alarm, a writer
who cannot tell two shown failures apart, a failure read in someone else's issue."""

from __future__ import annotations

import json

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste

IMPORT_ERROR = (
    'ModelError: Received client error (400) from primary with message "{"code": 400, "type": '
    '"InternalServerException", "message": "No module named \'onnxruntime\'"}"'
)


def test_requirements_that_list_the_module_leave_the_missing_line_and_the_isolated_install_open() -> None:
    # Given an import error, and the requirements file shown listing the module under a cat
    text = "\n".join(
        [
            IMPORT_ERROR,
            "$ tar xzf model.tar.gz code/requirements.txt -O",
            "onnxruntime>=1.28.0",
            "numpy<3",
        ]
    )
    # When the paste is diagnosed
    diagnosis = diagnose(evidence_from_paste(text, origin="ticket"))
    # Then adding the requirement is no fix: the answer is unknown, F01 and its cause F37 are the candidates
    assert diagnosis.id == "unknown"
    assert any(line.startswith("[candidate] F01") for line in diagnosis.evidence)
    assert any(
        line.startswith("[candidate] F37") and "onnxruntime>=1.28.0" in line for line in diagnosis.evidence
    )


def test_a_writer_insisting_the_module_is_listed_is_a_doubt_in_either_language() -> None:
    for said in (
        "requirements.txt 에 onnxruntime>=1.28.0 분명히 넣었습니다.",
        "code/requirements.txt already has onnxruntime==1.31.1, but the call still fails.",
        "팀장님 말로는 requirements.txt 에 onnxruntime 넣었다고 함.",
    ):
        # Given the import error and the writer's word that the file lists it
        diagnosis = diagnose(evidence_from_paste(f"{IMPORT_ERROR}\n{said}", origin="ticket"))
        # Then F01 is not named
        assert diagnosis.id == "unknown", said


def test_the_fix_that_adds_the_module_or_a_file_without_it_confirms_the_missing_line() -> None:
    for said in (
        "requirements.txt 에 onnxruntime 추가 후 재배포 -> 200 OK",
        "Added onnxruntime to code/requirements.txt and redeployed; the call returns 200 now.",
        "code/requirements.txt 에 onnxruntime 없어요.",
        "Is onnxruntime missing from requirements.txt?",
    ):
        # Given the import error and a line about the requirements that does not say the module was listed
        diagnosis = diagnose(evidence_from_paste(f"{IMPORT_ERROR}\n{said}", origin="ticket"))
        # Then the missing requirement is named
        assert diagnosis.id == "F01", said


COMPONENT = """$ aws sagemaker describe-inference-component --inference-component-name nli-b --output yaml
EndpointName: shared-g5
InferenceComponentName: nli-b
InferenceComponentStatus: {status}
RuntimeConfig:
  CurrentCopyCount: {current}
  DesiredCopyCount: 2
VariantName: AllTraffic
"""


def test_a_component_still_creating_with_no_copy_placed_has_not_come_short() -> None:
    # Given a component still Creating with none of its copies placed yet, on an endpoint of one ml.g5.xlarge
    on_g5 = "The endpoint runs one ml.g5.xlarge.\n"
    creating = diagnose(
        evidence_from_paste(on_g5 + COMPONENT.format(status="Creating", current=0), origin="t")
    )
    # And one InService with one of its two copies
    short = diagnose(evidence_from_paste(on_g5 + COMPONENT.format(status="InService", current=1), origin="t"))
    # Then only the settled shortfall names F09
    assert creating.id == "unknown"
    assert short.id == "F09"


def _pagerduty(details: str) -> str:
    """A PagerDuty v3 incident.resolved webhook whose body carries the responder's note."""
    incident = {
        "event": {
            "event_type": "incident.resolved",
            "agent": {"summary": "On-call", "type": "user_reference"},
            "data": {
                "type": "incident",
                "status": "resolved",
                "title": "emb-old: The primary container for production variant AllTraffic did not pass the "
                "ping health check.",
                "body": {"details": details},
            },
        }
    }
    return json.dumps(incident)


def test_a_resolution_that_calls_the_alert_no_failure_names_no_entry() -> None:
    for note in (
        "Planned teardown of emb-old; the ping failed while it was being deleted. False alarm.",
        "삭제 중이던 구 endpoint 라 ping 실패가 잡힌 것. 실제 장애 아님.",
        "The old endpoint was being deleted. Nothing to do on our side.",
    ):
        # Given a resolved ping alert whose responder dismissed it
        diagnosis = diagnose(evidence_from_paste(_pagerduty(note), origin="pagerduty"))
        # Then no entry is named: the ping rule is a candidate, and the dismissal is quoted
        assert diagnosis.id == "unknown", note
        assert any(line.startswith("[candidate] F07") for line in diagnosis.evidence)
        assert any(line.startswith("[note] dismissed in the paste") for line in diagnosis.evidence)


def test_a_dismissal_asked_about_or_denied_leaves_the_alert_standing() -> None:
    for note in ("Is this a false alarm?", "Not a false alarm: the new endpoint fails the same way."):
        # Given the same alert whose note only asks, or denies the dismissal
        diagnosis = diagnose(evidence_from_paste(_pagerduty(note), origin="pagerduty"))
        # Then the ping failure is named
        assert diagnosis.id == "F07", note


def test_a_failure_read_in_someone_elses_issue_is_no_evidence_of_ours() -> None:
    # Given a question that cites another project's issue about vLLM serving a default model
    text = (
        "I read #31877 where the vLLM DLC served Qwen/Qwen3-0.6B instead of the requested model.\n"
        "Our /v1/models lists /opt/ml/model and /classify returns our three labels."
    )
    # Then no entry is named; told as ours, the same words name F26
    assert diagnose(evidence_from_paste(text, origin="issue")).id == "unknown"
    ours = text.replace("I read #31877 where the", "Since the upgrade our")
    assert diagnose(evidence_from_paste(ours, origin="issue")).id == "F26"


PING_AND_WORKERS = "\n".join(
    [
        "UpdateEndpoint failed: The primary container for production variant AllTraffic did not pass the ping "
        "health check. Please check CloudWatch logs for this endpoint.",
        "[INFO ] W-9004-model com.amazonaws.ml.mms.wlm.BatchAggregator - Load model failed: model, error: Worker died.",
        "Three containers on ml.c6i.2xlarge, default workers.",
    ]
)


def test_a_writer_who_cannot_tell_two_shown_failures_apart_leaves_both_open() -> None:
    for said in (
        "메모리 부족으로 ping 못 넘긴 건지 worker 가 죽은 건지 구분이 안 되네요.",
        "We can't tell whether the ping or the workers went first.",
    ):
        # Given the signatures of F02 and F07, and the writer saying the paste does not decide
        diagnosis = diagnose(evidence_from_paste(f"{PING_AND_WORKERS}\n{said}", origin="chat"))
        # Then both are candidates of an unknown answer
        assert diagnosis.id == "unknown", said
        assert {line[12:15] for line in diagnosis.evidence if line.startswith("[candidate]")} >= {
            "F02",
            "F07",
        }
    # Without that line one of them is named
    assert diagnose(evidence_from_paste(PING_AND_WORKERS, origin="chat")).id in {"F02", "F07"}


QUOTA_ERROR = (
    "ResourceLimitExceeded: The account-level service limit 'ml.g5.2xlarge for endpoint usage' is 2 Instances, "
    "with current utilization of 2 Instances and a request delta of 1 Instances."
)


def test_a_failure_forwarded_with_our_side_unaffected_names_no_entry() -> None:
    for note in (
        "(전달하며) 우리 계정은 해당 없음. 적용값 6, 사용 2 확인.",
        "→ 우리 쪽 영향 없음.",
        "FYI only: we're not affected, our quota is 6 with 2 in use.",
        "재발 없음 확인, 티켓 닫습니다.",
    ):
        # Given another account's quota error, forwarded with a note that ours is not affected or it did not recur
        diagnosis = diagnose(
            evidence_from_paste(
                f"검색팀 계정에서 아래 오류로 배포 실패.\n{QUOTA_ERROR}\n{note}", origin="mail"
            )
        )
        # Then no entry is named
        assert diagnosis.id == "unknown", note
    # And without the note, the quota is named
    assert diagnose(evidence_from_paste(QUOTA_ERROR, origin="mail")).id == "F39"


READ_TIMEOUT = (
    "botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "
    '"https://runtime.sagemaker.us-east-1.amazonaws.com/endpoints/bge-prod/invocations"'
)


def test_a_read_timeout_on_an_endpoint_its_writer_calls_serverless_leaves_oom_and_cold_start_open() -> None:
    # Given a client's read timeout, its writer's word that the endpoint is serverless, and no server log
    for said in (
        "서버리스 엔드포인트. 로그는 아직 못 봄.",
        "It's a serverless endpoint; no CloudWatch access yet.",
    ):
        diagnosis = diagnose(evidence_from_paste(f"{READ_TIMEOUT}\n{said}", origin="t"))
        # Then a worker dying for memory (F14) and a long cold start (F15) are both open, and no other server's work
        assert diagnosis.id == "unknown", said
        assert "F14" in diagnosis.title and "F18" not in diagnosis.title, said
    # A question about it tells nothing: the endpoint's kind stays unknown, so an LMI load (F18) is as open
    asked = diagnose(evidence_from_paste(f"{READ_TIMEOUT}\nIs this endpoint serverless?", origin="t"))
    assert asked.id == "unknown" and "F18" in asked.title


def test_nobody_denies_what_follows() -> None:
    # Given a report that no worker died, as "nobody's worker died"
    text = "instance ml.c6i.2xlarge, workers=4. Nobody's worker died, no errors in the run."
    # Then F02 is not named
    assert diagnose(evidence_from_paste(text, origin="t")).id == "unknown"


def test_a_korean_retrospective_recalls_what_had_happened() -> None:
    # Given a component event now InService, with a note on the memory error an earlier request had had
    note = '6144MB 로 요청했을 때 "There is not enough memory available for this Inference Component" 났던 건 1024 로 낮춰서 해결.'
    # Then the recalled error names nothing; said of now, it names F10
    assert diagnose(evidence_from_paste(note, origin="t")).id == "unknown"
    now = note.replace("났던 건 1024 로 낮춰서 해결.", "가 납니다.")
    assert diagnose(evidence_from_paste(now, origin="t")).id == "F10"


def test_serverless_named_beside_real_time_as_an_alternative_is_no_context() -> None:
    # Given a worker's death, and a writer who does not know whether the endpoint is serverless or real-time
    text = (
        "Load model failed: model, error: Worker died.\n"
        "배포 파이프라인이 serverless 랑 real-time 둘 다 만들고 있어서 어느 쪽인지 아직 모름."
    )
    # Then neither F02 nor F14 is named
    assert diagnose(evidence_from_paste(text, origin="t")).id == "unknown"


def test_a_belief_since_corrected_is_no_evidence() -> None:
    # Given a note that first took the slow calls for dying workers, then found none
    text = "처음엔 Worker died 인 줄 알았는데 died 로그 없음, 순서대로 로딩 중이었던 것. ml.c7i.2xlarge."
    # Then F02 is not named
    assert diagnose(evidence_from_paste(text, origin="t")).id == "unknown"
