"""An upstream issue with a Korean particle, and talk there was of a failure; "this doesn't apply" and "조치 필요 사항 없음";
an attempt dated to an earlier weekday; run labels whose length leads their word (F32); batches parted by commas
(F31); a writer unsure how the handler treats a list (F31 doubted)."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def _reading(text: str, mention: str) -> str:
    at = text.index(mention)
    return polarity(text, at, at + len(mention)).polarity


def test_an_upstream_issue_and_talk_there_was_are_someone_elses() -> None:
    text = '참고로 upstream 이슈에서 text-pair 모델에 /score 가 404 나는 얘기가 있었음 ("{"detail":"Not Found"}").'
    assert _reading(text, "/score 가 404") == "other"
    said = "/score 가 404 나는 얘기가 있었음"
    assert _reading(said, "/score 가 404") == "other"


def test_another_teams_matter_that_does_not_apply() -> None:
    text = "\n".join(
        [
            "Subject: FYI: vLLM /score 404",
            'The search team hit "POST /score HTTP/1.1" 404 Not Found on their vLLM reranker in March.',
            "Our side: we serve on the HF DLC, not vLLM, so this doesn't apply. No errors this week.",
        ]
    )
    assert _diagnosed(text).id != "F27"


def test_a_settled_retrospective_with_nothing_to_do() -> None:
    text = "\n".join(
        [
            "[회고] 4월 g6e 배포 지연 건 - 완료",
            "지난달 4/10 에 ResourceLimitExceeded 로 CreateEndpoint 가 거절됐던 건입니다",
            "(\"The account-level service limit 'ml.g6e.xlarge for endpoint usage' is 0 Instances ...\").",
            "4/11 증설 승인, 재배포 후 InService. 현재 조치 필요 사항 없음.",
        ]
    )
    assert _diagnosed(text).id != "F39"


def test_an_attempt_dated_to_an_earlier_weekday_is_the_past() -> None:
    text = (
        "note: this replaces Monday's attempt on ml.m5.large which failed with "
        '"did not pass the ping health check". Moved to m5.xlarge, both containers return 200.'
    )
    assert _diagnosed(text).id != "F07"


def test_run_labels_whose_length_leads_their_word() -> None:
    text = "\n".join(
        [
            "Our benchmark used the eval set (median 40 tokens). Production texts are 300-512 tokens.",
            "Re-ran with inputs padded to 512:",
            "               40-tok sample    512 fixed",
            "  b=1 p50      20.0 ms          23.1 ms",
            "  b=8 p50      21.2 ms          96.0 ms",
        ]
    )
    assert _diagnosed(text).id == "F32"


def test_batches_parted_by_commas() -> None:
    text = "\n".join(
        [
            "e5 / ml.g6e.xlarge 배치 측정",
            '- 요청: {"inputs": [24개 문장]}',
            "- b=1: 15ms, b=24: 372ms  (거의 선형, 24배)",
            "parameters 에 batch_size 안 넣었음.",
        ]
    )
    assert _diagnosed(text).id == "F31"


def test_a_writer_unsure_how_the_handler_treats_a_list() -> None:
    text = "\n".join(
        [
            "bge-small ONNX on ml.g5.xlarge, custom inference.py.",
            "batch 1: 8 ms; batch 16: 130 ms; batch 64: 520 ms. Basically linear.",
            "I didn't check GPUUtilization yet, and I'm not sure how the handler treats a list.",
        ]
    )
    assert _diagnosed(text).id == "unknown"
