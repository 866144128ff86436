"""A check's conclusion that nothing is wrong dismisses what it checked; another repository's issue linked by its
github.com address is someone else's; two kinds said missing from a record ("...였는지 ...였는지 sheet 에 없음")
leave a tail open; a piped call-number column ("call #", calls "2..50"); a scalable-targets listing found empty,
and an instance "계속 과금"; the label written as a field after INT8; the benchmark's and production's token
lengths side by side."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.call_columns import call_column_first_cold
from workflows.diagnosis.paste import evidence_from_paste


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_checks_conclusion_that_nothing_is_wrong_dismisses_what_it_checked() -> None:
    checked = "- ResourceLimitExceeded / ThrottlingException 같은 API 에러 CloudTrail 에 없음\n"
    assert _diagnosed(checked + "결론: 엔드포인트 쪽 이상 없음. 종결.\n").id == "unknown"
    assert _diagnosed(checked + "Conclusion: no issue on the endpoint side.\n").id == "unknown"


def test_an_issue_linked_by_its_github_address_is_someone_elses() -> None:
    text = (
        'fyi: github.com/vllm-project/vllm issue where mDeBERTa fails with "Model architectures '
        "['DebertaV2ForSequenceClassification'] are not supported\". Our NLI endpoint stays on the HF DLC.\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_two_kinds_said_missing_from_the_record_leave_a_tail_open() -> None:
    text = (
        "| warmup | n | p50 | p99 |\n| 5 | 300 | 30 ms | 27,100 ms |\n| 15 | 300 | 29 ms | 240 ms |\n"
        "bench-01 은 serverless 였음. 이번 bench-02 가 serverless 였는지 real-time 였는지 sheet 에 없음.\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_a_piped_call_number_column_with_a_range_of_calls() -> None:
    rows = [
        "| step | batch | call # | latency |",
        "|---|---|---|---|",
        "| warm | 4 | 1 | 39.2 s |",
        "| warm | 4 | 2..40 | 12–14 ms |",
    ]
    assert call_column_first_cold(rows) == rows[2]


def test_an_empty_scalable_targets_listing_and_an_instance_still_billed() -> None:
    config = "ManagedInstanceScaling: Status ENABLED, MinInstanceCount 0, MaxInstanceCount 1\n"
    listing = "`aws application-autoscaling describe-scalable-targets --service-namespace sagemaker` → 결과 비어있음\n"
    assert _diagnosed(config + listing).id == "F11"
    assert _diagnosed(config + "트래픽 끊은 지 이틀, 인스턴스 1대 계속 과금 중.\n").id == "F11"


def test_the_label_written_as_a_field_after_int8() -> None:
    text = "quantize_dynamic(QuantType.QInt8) 후 검증 300건 전부 label=contradiction. fp32 는 정상.\n"
    assert _diagnosed(text).id == "F29"


def test_the_benchmarks_and_productions_token_lengths_side_by_side() -> None:
    assert _diagnosed("운영 문서는 평균 450 tokens 인데 벤치 샘플은 40 tokens 짜리 문장.\n").id == "F32"
    assert _diagnosed("bench samples were ~35 tokens; production requests average 470 tokens.\n").id == "F32"
