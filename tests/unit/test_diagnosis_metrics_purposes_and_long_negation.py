"""Metric rows among a count table's rows and "every single output" (F29); a load test that ended (F13); what was
not installed on purpose; a purpose is no fact (a batch_size to be sent, F31); a line's later measurements share its
label's length (F32); Korean long negation and "발생 안 함"; an endpoint shared with another team leaves F10 open."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.batch_verdicts import hidden_by_samples, one_by_one
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def _reading(line: str, mention: str) -> str:
    start = line.index(mention)
    return polarity(line, start, start + len(mention)).polarity


def test_metric_rows_among_the_counts_and_every_single_output() -> None:
    table = "\n".join(
        [
            "dynamic quantization, 300 dev pairs",
            "               fp32       int8",
            "accuracy       0.801      0.336",
            "entailment     98         0",
            "neutral        104        300",
            "contradiction  98         0",
            "latency p50    40 ms      22 ms",
        ]
    )
    assert _diagnosed(table).id == "F29"
    assert _diagnosed("After quantize_dynamic to int8, every single output is 'entailment'.").id == "F29"


def test_a_load_test_that_ended_opens_the_scale_in() -> None:
    text = "\n".join(
        [
            "  09:00:00  부하 테스트 종료",
            "  09:14:10  e5-ic CurrentCopyCount 1 → 0",
            "  09:28:40  CurrentInstanceCount 1 → 0",
        ]
    )
    assert _diagnosed(text).id == "F13"


def test_what_was_not_installed_on_purpose_is_denied_and_what_cannot_be_installed_is_not() -> None:
    assert _reading("optimum 은 일부러 안 깔았음", "optimum") == "negated"
    assert _reading("optimum 이 transformers 5 랑 같이 못 깔림", "optimum") == "affirmed"


def test_a_purpose_is_no_fact() -> None:
    assert _reading("클라이언트가 batch_size 를 항상 보내도록 수정", "batch_size") == "hypothetical"
    lines = [
        "  b=1   p50  15 ms",
        "  b=16  p50 250 ms",
        "결론: 클라이언트에서 batch_size 를 항상 넣도록 수정.",
    ]
    assert one_by_one(lines) is not None


def test_a_lines_later_measurements_share_its_labels_length() -> None:
    lines = [
        "  natural(45 tok)  b=1 p50 20.0ms  b=16 p50 21.0ms",
        "  fixed 512        b=1 p50 22.0ms  b=16 p50 95.0ms",
    ]
    found = hidden_by_samples(lines)
    assert found is not None and found[0].tokens == 45 and found[1].batch == 16


def test_korean_long_negation_and_did_not_occur() -> None:
    assert _reading("ReadTimeoutError 발생 안 함", "ReadTimeoutError") == "negated"
    assert _reading("Worker died 는 발생하지 않았음", "Worker died") == "negated"
    assert _reading("Worker died 가 나지 않으면 배포", "Worker died") != "negated"


def test_an_endpoint_shared_with_another_team_leaves_memory_open() -> None:
    text = "\n".join(
        [
            '"Inference component creation failed: SageMaker was able to deploy 0 out of 1 requested copies."',
            "endpoint 는 다른 팀이랑 shared 라서 뭐가 올라가 있는지 확인 중",
        ]
    )
    assert _diagnosed(text).id == "unknown"
