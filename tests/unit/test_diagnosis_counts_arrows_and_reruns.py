"""Label counts as a tuple in a cell, under label columns or in a Counter (F29); a batch_size said not to be passed
(F31); a figure before and after a padding (F32); a ticket closed as done and an upstream issue kept for reference;
vLLM's own start-up lines; two engines offered as alternatives; calls numbered after their word (F18); a p99 that
fell tenfold after a longer warm-up (F33)."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.batch_verdicts import hidden_by_samples, one_by_one
from workflows.diagnosis.latency import tail_gone_after_warmup
from workflows.diagnosis.paste import evidence_from_paste


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_quantized_rows_counts_in_one_cell_collapse() -> None:
    text = "\n".join(
        [
            "| variant | size | acc | pred dist (E/N/C) |",
            "|---|---|---|---|",
            "| fp32 | 540 MB | 0.81 | 120 / 95 / 85 |",
            "| qint8 | 140 MB | 0.34 | 0 / 0 / 300 |",
        ]
    )
    assert _diagnosed(text).id == "F29"


def test_a_quantized_row_under_label_columns_collapses() -> None:
    text = "\n".join(
        [
            "dev set 300, dynamic quantization",
            "variant   acc    entailment  neutral  contradiction",
            "fp32      0.80   101         97       102",
            "int8      0.33   300         0        0",
        ]
    )
    assert _diagnosed(text).id == "F29"
    spread = text.replace(
        "int8      0.33   300         0        0", "int8      0.79   99          99       102"
    )
    assert _diagnosed(spread).id != "F29"


def test_a_counter_of_the_quantized_predictions_with_one_label_collapses() -> None:
    one = ">>> Counter(preds_int8)\nCounter({'contradiction': 240})\n(quantize_dynamic, QInt8)"
    assert _diagnosed(one).id == "F29"
    spread = ">>> Counter(preds_int8)\nCounter({'contradiction': 80, 'neutral': 81, 'entailment': 79})\n(quantize_dynamic)"
    assert _diagnosed(spread).id != "F29"


def test_all_one_label_ending_its_sentence_collapses_and_a_condition_does_not() -> None:
    assert _diagnosed("quantize_dynamic 적용한 int8 모델은 문장과 상관없이 모두 entailment.").id == "F29"
    plan = 'int8 quantize_dynamic 검증 예정: 모두 "entailment" 나오면 폐기'
    assert _diagnosed(plan).id != "F29"


def test_a_batch_size_said_not_passed_leaves_the_list_one_by_one() -> None:
    lines = [
        "- 1 sentence: p50 12 ms",
        "- 16 sentences in one request: p50 190 ms",
        "payload 에 parameters.batch_size 는 안 넣었음",
    ]
    assert one_by_one(lines) is not None
    assert one_by_one([*lines[:2], "We sent no batch_size in the payload."]) is not None
    assert one_by_one([*lines[:2], "batch_size=16 in parameters for both runs"]) is None


def test_a_figure_before_and_after_a_padding_shows_short_samples() -> None:
    lines = [
        "samples average 48 tokens; real inputs run to 512",
        "re-run padded to 512:",
        "  b=16 p50: 31.0 ms -> 140.2 ms",
    ]
    found = hidden_by_samples(lines)
    assert found is not None and found[1].tokens == 512 and found[0].ms == 31.0


def test_each_line_led_by_its_label_opens_its_block() -> None:
    lines = [
        "Sizing review: why prod is slower",
        "Load test (sprint 12): 500 samples, median 40 tokens.",
        "  b=4: p50 14.0 ms",
        "Prod (week 2): contracts, most cut at 512 tokens.",
        "  b=4: p50 ~61 ms",
    ]
    found = hidden_by_samples(lines)
    assert found is not None and found[0].tokens == 40 and found[1].production


def test_a_ticket_closed_as_done_and_an_upstream_issue_kept_for_reference_settle() -> None:
    closed = "\n".join(
        [
            "OPS-311  [Closed / Done]  emb: 500s after deploy",
            'Log then: "Load model failed: model, error: Worker died."',
            "Fix: one worker per container. Soak 24h clean. No further action.",
        ]
    )
    assert _diagnosed(closed).id == "unknown"
    upstream = "\n".join(
        [
            '참고: upstream 이슈 - "optimum-onnx 0.0.3 depends on transformers<4.58.0" 로 transformers 5 와 충돌.',
            "우리 쪽은 변환 venv 분리 (transformers 4.57.1) 라 영향 없음.",
        ]
    )
    assert _diagnosed(upstream).id != "F28"


def test_vllms_own_startup_lines_name_it() -> None:
    text = "\n".join(
        [
            'ContainerArguments: ["--model", "/opt/ml/model", "--max-model-len", "512"]',
            "INFO non-default args: {}",
            "$ curl -s localhost:8080/v1/models",
            '{"data": [{"id": "Qwen/Qwen3-0.6B"}]}',
        ]
    )
    diagnosis = _diagnosed(text)
    assert diagnosis.id == "F26" and diagnosis.confidence >= 0.5


def test_two_engines_offered_as_alternatives_leave_the_first_call_open() -> None:
    text = "\n".join(
        [
            "call 1: ERROR ModelError: Your invocation timed out while waiting for a response from container primary.",
            "The image tag is shared: it is either the djl-lmi build or the TensorRT build, nobody knows which.",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_calls_numbered_after_their_word_show_a_cold_first_call_on_lmi() -> None:
    text = "\n".join(
        [
            "djl-inference 0.33.0-lmi15.0.0 on ml.g5.xlarge, InService",
            "call 1: 38.2 s",
            "call 2: 27 ms",
            "call 3: 26 ms",
        ]
    )
    assert _diagnosed(text).id == "F18"


def test_a_p99_that_fell_tenfold_after_a_longer_warmup_measured_loading_workers() -> None:
    lines = ["bench run A (warmup=2): p99=2240ms", "warm-up 50 으로 다시 돌리니 p99 18.9ms."]
    assert tail_gone_after_warmup(lines) is not None
    assert tail_gone_after_warmup(["bench run A (warmup=2): p99=2240ms", "다시 돌리니 p99 18.9ms."]) is None
    text = "\n".join(["real-time endpoint, ml.c6i.xlarge, right after deploy", *lines])
    assert _diagnosed(text).id == "F33"
