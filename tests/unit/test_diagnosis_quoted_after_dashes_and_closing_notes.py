"""A dash that introduces a quote does not end the sentence that frames it; "보니까" carries what was seen, so another
project's issue reaches the quote after it; "다른 사람들은" is someone else; "이슈 없음 → close" settles a check; a
log that stops at "Running OrtTransformersOptimization" started the pass."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity

QUOTE = "\"Model architectures ['DebertaV2ForSequenceClassification'] are not supported\""


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def _reading(line: str) -> str:
    start = line.index("Model architectures")
    return polarity(line, start, start + 19).polarity


def test_a_dash_that_introduces_a_quote_keeps_the_frame() -> None:
    assert _reading(f"참고용 링크: vllm-project/vllm 이슈 - {QUOTE}") == "other"
    # A dash between two sentences still ends the first.
    assert _reading(f"we read the vllm-project/vllm issue - then we saw {QUOTE} ourselves") == "affirmed"


def test_what_another_projects_issue_shows_is_theirs() -> None:
    assert _reading(f"upstream issue 보니까 {QUOTE} 에 막혔더라구요.") == "other"
    assert _reading(f"참고로 다른 사람들은 {QUOTE} 에 막혔더라구요.") == "other"


def test_no_issue_then_closed_settles_the_check() -> None:
    text = (
        "혹시 803?\nTriton 올리기 전에 error 803 (unsupported display driver / cuda driver combination) 나올까봐 체크함.\n"
        'InferenceAmiVersion 설정, 로그에 "CUDA Forward Compatibility mode ENABLED" 확인.\n'
        "이슈 없음 → close.\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_a_log_that_stops_at_running_the_optimizer_pass_started_it() -> None:
    text = (
        "log 마지막 줄: Running OrtTransformersOptimization\n"
        "$ ps -o etime,cmd -p 4121\n"
        "    ELAPSED CMD\n"
        "      31:02 python -m olive run --config olive.json\n"
    )
    assert _diagnosed(text).id == "F34"
