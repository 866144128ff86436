"""A scale-in timed in minutes from the stop, and "Invocations -> 0" (F13); network isolation switched on in words
(F01 or F37); label counts printed by the quantized model's cell (F29); "N건 요청" and an arrow to words (F31); a line
piped into measurements (F32); a limit known in advance and worked around."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.batch_verdicts import hidden_by_samples, one_by_one
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity
from workflows.diagnosis.scale_in import timeline


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_scale_in_timed_in_minutes_from_the_stop() -> None:
    lines = [
        "| t (min) | event | copies | instances |",
        "|---|---|---|---|",
        "| 0 | load generator stopped | 1 | 1 |",
        "| 14 | scale-in | 0 | 1 |",
        "| 29.5 | instance released | 0 | 0 |",
    ]
    found = timeline(lines)
    assert found is not None and found.minutes == 29.5
    assert _diagnosed("\n".join(["scale-to-zero test, bge-ic on ml.g5.xlarge", *lines])).id == "F13"


def test_invocations_to_zero_and_a_load_test_ended_in_korean_open_a_scale_in() -> None:
    lines = [
        "10:00:00  load test 종료, Invocations -> 0",
        "10:16:30  CurrentCopyCount 0",
        "10:31:00  CurrentInstanceCount 0",
    ]
    found = timeline(lines)
    assert found is not None and found.minutes == 31.0


def test_network_isolation_switched_on_in_words_leaves_the_install_open() -> None:
    text = "\n".join(
        [
            "message \"No module named 'onnxruntime'\"",
            "The hardening change flipped EnableNetworkIsolation to true on the model.",
        ]
    )
    diagnosis = _diagnosed(text)
    assert diagnosis.id == "unknown" and "F37" in diagnosis.title


def test_label_counts_printed_by_the_quantized_models_cell() -> None:
    text = "\n".join(
        [
            "In [5]: evaluate(session_int8, val[:300])",
            "Out[5]:",
            "accuracy: 0.33",
            "label distribution: {'contradiction': 300, 'entailment': 0, 'neutral': 0}",
        ]
    )
    assert _diagnosed(text).id == "F29"
    fp32 = text.replace("session_int8", "session_fp32")
    assert _diagnosed(fp32).id != "F29"


def test_counted_requests_and_an_arrow_to_words() -> None:
    lines = [
        "  - 1건 요청: p50 14 ms",
        "  - 16건 리스트 요청: p50 230 ms  → 건당 14ms × 16 와 비슷",
    ]
    found = one_by_one(lines)
    assert found is not None and found[0].batch == 1 and found[1].ms == 230.0


def test_a_line_piped_into_measurements_shares_its_label() -> None:
    lines = [
        "  natural 45-token sample:  b=1 p50 20.0 ms | b=16 p50 21.0 ms",
        "  fixed 512 tokens (padded): b=1 p50 22.0 ms | b=16 p50 95.0 ms",
    ]
    found = hidden_by_samples(lines)
    assert found is not None and found[0].tokens == 45 and found[1].ms == 95.0


def test_a_limit_known_in_advance_and_worked_around() -> None:
    line = "optimum 이 transformers 5 랑 충돌하는 거 알고 있어서 변환용 venv 를 따로 씀"
    assert polarity(line, 0, 7).polarity == "hypothetical"
    text = "optimum 은 transformers<4.58 핀 때문에 충돌 나는 거 알아서 일부러 안 깔았음. 변환은 성공."
    assert _diagnosed(text).id != "F28"
