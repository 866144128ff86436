"""A failed ping whose log its writer could not read (F07); copies short with no instance type shown (F09 against
F10); a post about another repository's issue and a post one read; another's error "not ours"; an empty reason in a
ticket's timeline (F06); the first curl (F18); a collapse quoted in backticks (F29); an expectation in an aside on a
measurement (F31); the field's own name for the missing accelerator count (F08)."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.batch_verdicts import one_by_one
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity

PING = (
    '{"EndpointName": "nli-v2", "EndpointStatus": "Failed", "FailureReason": "The primary container for production '
    'variant AllTraffic did not pass the ping health check. Please check CloudWatch logs for this endpoint."}'
)


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_failed_ping_whose_log_could_not_be_read_is_open() -> None:
    assert _diagnosed(PING).id == "F07"
    for said in (
        "Can someone look? I don't have CloudWatch access here.",
        "로그는 권한이 없어서 아직 못 봤어요.",
    ):
        assert _diagnosed(f"{said}\n{PING}").id == "unknown", said


def test_copies_short_with_no_instance_type_leave_devices_and_memory_open() -> None:
    short = (
        '{"InferenceComponentName": "ic-a", "InferenceComponentStatus": "InService", '
        '"RuntimeConfig": {"DesiredCopyCount": 4, "CurrentCopyCount": 1}}'
    )
    found = _diagnosed(short)
    assert found.id == "unknown" and "F10" in found.title
    assert _diagnosed(f"{short}\nThe endpoint runs one ml.g5.xlarge.").id == "F09"


def test_another_repositorys_issue_and_a_post_one_read_are_someone_elses() -> None:
    line = "huggingface/transformers 이슈에서 누가 Worker died 겪었음"
    start = line.index("Worker died")
    assert polarity(line, start, start + 11).polarity == "other"
    post = "Worker died 났다는 글 봤음"
    assert polarity(post, 0, 11).polarity == "other"


def test_an_error_shared_by_another_team_as_not_ours_names_nothing() -> None:
    text = (
        "보안팀이 공유한 에러 (참고, 우리 쪽 아님):\n"
        "An error occurred (AccessDeniedException) when calling the CreateEndpoint operation: User: "
        "arn:aws:sts::111122223333:assumed-role/etl/x is not authorized to perform: sagemaker:CreateEndpoint "
        "with an explicit deny in a service control policy\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_an_empty_reason_in_a_tickets_timeline_is_the_stall() -> None:
    text = '09:10-10:02 EndpointStatus Creating\n10:02 EndpointStatus Failed, FailureReason: "" (empty)\n'
    assert _diagnosed(text).id == "F06"


def test_the_first_curl_that_took_the_load_on_lmi() -> None:
    text = "djl lmi endpoint on ml.g5.xlarge: the first curl took 51s, the second call 40 ms."
    assert _diagnosed(text).id == "F18"


def test_a_collapse_with_its_label_in_backticks() -> None:
    text = "model_int8.onnx 로 바꾸고 devset 돌렸더니 전부 `neutral` 으로 예측됨. fp32 는 정상."
    assert _diagnosed(text).id == "F29"


def test_an_expectation_in_an_aside_on_a_measurement_is_still_a_measurement() -> None:
    lines = [
        'mdeberta @ ml.g6e.xlarge (L40S), payload {"inputs": [32 sentences]}',
        "b=1   p50 15ms",
        "b=32  p50 492ms   (기대치 25ms 전후)",
    ]
    assert one_by_one(lines) is not None
    assert one_by_one([*lines[:2], "b=32 기대치 p50 25ms"]) is None


def test_the_fields_own_name_for_the_missing_accelerator_count() -> None:
    text = (
        "FailureReason: 'NumberOfAcceleratorDevicesRequired must be specified for inference components hosted "
        "on ml.g5.12xlarge.'\nRuntimeConfig: {CurrentCopyCount: 0, DesiredCopyCount: 1}\n"
    )
    assert _diagnosed(text).id == "F08"
