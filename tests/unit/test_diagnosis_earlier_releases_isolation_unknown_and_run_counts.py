"""An earlier release's incident named in Korean ("이전 v6 롤백 건") is the past; "현재 문제 없음" dismisses; what a team
named by its name hit is theirs; "...할지 ...할지 모름" leaves two readings open; network isolation's setting said to
be unknown leaves F37 open beside F01; "serverless copy and the prod real-time one" tells neither; a run's count in
Korean ("1회차 46.9 s, 2회차 16.2 ms") shows a first call; an optimizer said never to finish."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.endpoint_kind import serverless
from workflows.diagnosis.paste import evidence_from_paste


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_an_earlier_releases_incident_named_in_korean_is_the_past() -> None:
    text = "v9 config 적용 완료, smoke test 통과. 이전 v8 롤백 건(ResourceLimitExceeded, 3월)과 무관.\n"
    assert _diagnosed(text).id == "unknown"


def test_no_problem_now_dismisses_the_rows_above_it() -> None:
    rows = (
        '2025-05-12 09:14:02.331,"W-9000-model_1.0-stdout MODEL_LOG - INVALID_ARGUMENT : Invalid input name: '
        'token_type_ids"\n'
    )
    assert _diagnosed(rows).id == "F03"
    assert _diagnosed(rows + "위 줄은 v12 때 것. v13 교체 후 0건. 현재 문제 없음.\n").id == "unknown"


def test_what_a_team_named_by_its_name_hit_is_theirs() -> None:
    text = (
        "FYI the ranking team hit `Model architectures ['DebertaV2ForSequenceClassification'] are not supported` "
        "when they tried vLLM. We stay on LMI.\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_two_courses_not_yet_chosen_leave_two_readings_open() -> None:
    text = (
        "FailureReason: SageMaker was able to deploy 0 out of 2 requested copies.\n"
        "ml.g5.2xlarge x1, 다른 IC 도 GPU 1 로 이미 올라가 있음. 메모리를 줄여야 할지 copy 를 줄여야 할지 아직 모름.\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_network_isolation_said_to_be_unknown_leaves_the_install_open() -> None:
    error = "ModelError: Received client error (400) from primary with message \"No module named 'onnxruntime'\"\n"
    assert _diagnosed(error).id == "F01"
    undecided = _diagnosed(error + "EnableNetworkIsolation 설정 여부는 아직 확인 중.\n")
    assert undecided.id == "unknown"
    assert "F37" in undecided.title


def test_a_serverless_copy_beside_a_prod_real_time_one_tells_neither() -> None:
    text = "the name is shared by the dev serverless copy and the prod real-time one\n"
    assert serverless(evidence_from_paste(text, origin="t")) is None


def test_a_runs_count_in_korean_shows_a_first_call() -> None:
    text = "bge TensorRT EP (onnxruntime-gpu), ml.g5.xlarge\nbatch=4: 1회차 41.3 s, 2회차 12.0 ms, 3회차 11.8 ms\n"
    assert _diagnosed(text).id == "F21"


def test_an_optimizer_said_never_to_finish() -> None:
    text = (
        "Olive OrtTransformersOptimization never finishes for deberta-v3-small: no new log line, 99% CPU.\n"
    )
    assert _diagnosed(text).id == "F34"
