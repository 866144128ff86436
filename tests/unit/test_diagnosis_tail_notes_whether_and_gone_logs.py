"""A person's note after `aws logs tail` output is prose, not the last event's; "-인지" with a particle asks
("worker died 인지에 따라"); "reading about" is someone else's; log streams gone with their retention are a log not
read (F07); a cause that cannot be pinned down yet ("원인 단정 불가") is undecided."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity

PING = "FailureReason: The primary container for production variant AllTraffic did not pass the ping health check.\n"


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_persons_note_after_logs_tail_output_is_prose() -> None:
    tail = (
        "$ aws logs tail /aws/sagemaker/Endpoints/cohost --since 1h\n"
        "2024-05-03T11:06:02 AllTraffic/i-0abc/minilm Model loaded\n"
        "three containers on one ml.m5.large. No Worker died anywhere, no OOM.\n"
    )
    assert _diagnosed(PING + tail).id == "F07"


def test_a_whether_clause_with_its_particle_asks() -> None:
    line = "ping 실패인지 worker died 인지에 따라 다르니까 로그 받아서 다시 봐요"
    start = line.index("worker died")
    assert polarity(line, start, start + 11).polarity == "hypothetical"


def test_reading_about_an_error_is_someone_elses() -> None:
    line = "reading about CUDA error 803 (driver too old for the image) - are we affected?"
    start = line.index("error 803")
    assert polarity(line, start, start + 9).polarity in ("other", "hypothetical")
    assert polarity("reading about error 803 in the forums", 14, 23).polarity == "other"


def test_log_streams_gone_with_their_retention_leave_a_failed_ping_open() -> None:
    said = "로그 그룹 보존기간 1일이라 지금은 스트림이 다 사라짐.\n"
    assert _diagnosed(PING + said).id == "unknown"


def test_a_cause_not_to_be_pinned_down_yet_is_undecided() -> None:
    text = PING + (
        "Load model failed: model, error: Worker died.\n"
        "ml.m5.large, co-host 2개. 메모리 문제인지 코드 문제인지 재현 전까지는 원인 단정 불가.\n"
    )
    assert _diagnosed(text).id == "unknown"
