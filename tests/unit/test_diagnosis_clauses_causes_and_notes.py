"""A Korean first invoke dated to the load (F18); the same list with batch_size far faster (F31); a negative condition
supposes its clause; "nothing is broken" said of a failure no error reveals; a writer who cannot tell an entry from its
cause; a time word dates its own clause; "건수"; top's TIME+ inline (F34); the position embeddings' Gather (F40);
Opsgenie's details and a note beside it; serverless offered beside an instance; a named team seeing it; a notice."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.batch_verdicts import one_by_one
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_korean_first_invoke_dated_to_the_models_load_on_lmi() -> None:
    text = "LMI (djl-inference) 엔드포인트. 첫 invoke 가 10:02:11 에 들어왔고 그때서야 모델 로드 시작함."
    assert _diagnosed(text).id == "F18"


def test_the_same_list_with_batch_size_far_faster_shows_the_loop() -> None:
    lines = [
        "single: p50 30.0 ms",
        'list of 16 ({"inputs": [16 texts]}): p50 300 ms',
        '{"inputs": [...], "parameters": {"batch_size": 16}} : p50 28 ms',
    ]
    assert one_by_one(lines) is not None


def test_a_negative_condition_supposes_its_clause() -> None:
    line = "batch_size 를 안 주면 하나씩 돌린다"
    assert polarity(line, 0, 10).polarity == "hypothetical"
    assert polarity("batch_size=8 로 돌리면 25 ms", 0, 10).polarity == "affirmed"


def test_nothing_broken_said_of_a_failure_no_error_reveals_is_no_dismissal() -> None:
    report = "\n".join(
        [
            "samples averaged 40 tokens:",
            "  b=8  p50 20.0 ms",
            "re-run padded to 512:",
            "  b=8  p50 90.0 ms",
            "Nothing is broken on the endpoint; the benchmark inputs were too short.",
        ]
    )
    assert _diagnosed(report).id == "F32"
    alarm = "Load model failed: model, error: Worker died.\nml.m5.xlarge. Nothing is broken, it recovered."
    assert _diagnosed(alarm).id == "unknown"


def test_a_writer_who_cannot_tell_an_entry_from_its_cause_leaves_both_open() -> None:
    text = "\n".join(
        [
            '"SageMaker was able to deploy 0 out of 1 requested copies."',
            "ml.g5.2xlarge. GPU 가 모자란 건지 메모리가 모자란 건지 구분이 안 됨",
        ]
    )
    diagnosis = _diagnosed(text)
    assert diagnosis.id == "unknown" and "F10" in diagnosis.title


def test_a_time_word_dates_its_own_clause() -> None:
    line = "Priya set this endpoint up yesterday, the first call timed out"
    at = line.index("timed out")
    assert polarity(line, at, at + 9).polarity == "affirmed"
    assert polarity(line, 0, 5).polarity == "historical"


def test_a_tables_count_column_and_tops_time_inline() -> None:
    table = "\n".join(
        [
            "GPU: L40S (ml.g6e.xlarge)",
            "| payload | 건수 | p50 |",
            "|---|---|---|",
            '| {"inputs": "a"} | 1 | 15.0 ms |',
            '| {"inputs": [a..p]} | 16 | 240 ms |',
        ]
    )
    assert _diagnosed(table).id == "F31"
    olive = "\n".join(
        [
            "[2026-01-02 08:41:22,304] [INFO] [engine.py:873:_run_pass] Running pass opt:OrtTransformersOptimization",
            "top: python olive run  99.8% CPU  RES 27.1g  TIME+ 21:04.77",
        ]
    )
    assert _diagnosed(olive).id == "F34"


def test_the_position_embeddings_gather_and_the_tokenizers_warning() -> None:
    text = "\n".join(
        [
            "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Non-zero status code returned while running Gather node. "
            "Name:'/bert/embeddings/position_embeddings/Gat",
            "Token indices sequence length is longer than the specified maximum sequence length for this model "
            "(700 > 512).",
        ]
    )
    assert _diagnosed(text).id == "F40"


def test_opsgenies_details_and_a_note_beside_the_alert() -> None:
    alert = (
        '{"action": "Create", "alert": {"message": "emb: model errors", "details": {"SampleEvents": '
        '"Load model failed: model, error: Worker died."}}, "note": "this is the ml.m5.xlarge one"}'
    )
    assert _diagnosed(alert).id == "F02"
    both = alert.replace("this is the ml.m5.xlarge one", "we run a serverless one and an ml.m5.xlarge one")
    assert _diagnosed(both).id == "unknown"


def test_a_named_team_seeing_it_and_a_notice_name_no_failure() -> None:
    thread = "fyi search team is seeing `POST /score HTTP/1.1 404 Not Found` on their vLLM reranker."
    assert _diagnosed(thread).id != "F27"
    notice = "\n".join(
        [
            "ML Platform notice #12 - GPU AMIs",
            'If the image\'s CUDA is newer than the driver the container stops with "(error 803)".',
        ]
    )
    assert _diagnosed(notice).id != "F20"
