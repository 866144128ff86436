"""Talk one heard about an error; a header of run labels with a figure under each (F32); a timeline in minutes and
seconds since the stop (F13)."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.batch_verdicts import hidden_by_samples
from workflows.diagnosis.batching import rows
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity
from workflows.diagnosis.scale_in import timeline


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_talk_one_heard_about_an_error_is_someone_elses() -> None:
    line = "must be specified 에러 난다는 얘기 들었는데 아직 시도는 안 해봤습니다"
    assert polarity(line, 0, 17).polarity == "other"


def test_a_header_of_run_labels_with_a_figure_under_each() -> None:
    lines = [
        "                natural(45tok)   fixed 512",
        "b=1 p50          20.0 ms          22.0 ms",
        "b=8 p50          21.0 ms          90.0 ms",
    ]
    found = hidden_by_samples(lines)
    assert found is not None and found[0].tokens == 45 and found[1].ms == 90.0
    label = ["벤치마크: 샘플 평균 45 토큰 (padding=longest)", "  b=1 p50 20.0ms / b=8 p50 21.0ms"]
    assert [row.batch for row in rows(label)] == [1, 8]


def test_a_timeline_in_minutes_and_seconds_since_the_stop() -> None:
    lines = ["t+00:00  last request", "t+14:10  CurrentCopyCount 0", "t+27:30  CurrentInstanceCount 1 -> 0"]
    found = timeline(lines)
    assert found is not None and found.minutes == 27.5
