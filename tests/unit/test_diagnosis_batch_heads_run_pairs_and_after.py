"""A space-aligned report whose header names a batch per latency column (F32); a line that sets the samples' run
beside a padded one, parted by a slash or "vs" (F32); the calls "after" a slow first call (F18)."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.batch_verdicts import hidden_by_samples
from workflows.diagnosis.batching import rows
from workflows.diagnosis.paste import evidence_from_paste


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_spaced_table_gives_one_row_per_batch_column() -> None:
    lines = [
        "input set            b=1 p50    b=4 p50    b=4 rps",
        "eval set (~40 tok)   11.0ms     12.5ms     310/s",
        "padded to 384        13.1ms     61.0ms     64/s",
    ]
    found = rows(lines)
    assert [(row.batch, row.ms) for row in found] == [(1, 11.0), (4, 12.5), (1, 13.1), (4, 61.0)]
    pair = hidden_by_samples(lines)
    assert pair is not None and (pair[0].ms, pair[1].ms) == (12.5, 61.0)


def test_a_spaced_korean_table_shows_short_samples() -> None:
    text = "\n".join(
        [
            "부하 테스트 다시 돌림 (bge-small, ml.c7i.xlarge)",
            "입력 세트            b=1 p50   b=16 p50   b=16 처리량",
            "평가 문장 (평균 35토큰)   9.8ms   15.2ms   1050/s",
            "384 고정 패딩          12.0ms   88.4ms   181/s",
            "실트래픽은 대부분 300 토큰 이상. 에러는 없음.",
        ]
    )
    assert _diagnosed(text).id == "F32"


def test_a_spaced_table_with_runs_alike_shows_nothing() -> None:
    lines = [
        "input set            b=1 p50    b=4 p50",
        "eval set (~40 tok)   11.0ms     12.5ms",
        "padded to 384        11.9ms     14.0ms",
    ]
    assert hidden_by_samples(lines) is None


def test_a_line_with_the_samples_run_beside_a_padded_one_is_two_rows() -> None:
    text = "\n".join(
        [
            "SEARCH-212 ranking latency in prod doesn't match the benchmark",
            "Re-ran on the same endpoint, same warm-up, no errors:",
            "  b=1 eval samples 11.0 ms p50 vs padded-384 13.1 ms",
            "  b=4 eval samples 12.5 ms p50 / padded-384 61.0 ms",
            "Not a cold start, not CPU fallback.",
        ]
    )
    assert _diagnosed(text).id == "F32"


def test_a_p50_beside_its_p99_is_one_run() -> None:
    assert len(rows(["b=4 eval samples 12.5 ms p50 / 19.0 ms p99"])) == 1


def test_the_calls_after_a_slow_first_call_on_lmi() -> None:
    text = "\n".join(
        [
            "First request to the LMI endpoint (djl-inference lmi, ml.g5.xlarge) takes ~37 s;",
            "every request after is 20-26 ms. InService and /ping 200 long before that. No errors.",
        ]
    )
    assert _diagnosed(text).id == "F18"
