"""A latency report's percentiles, read from lines and tables, and the tail that says the p99 measured cold
starts or loading workers."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.latency import cold_first_calls, runs, worst_tail
from workflows.diagnosis.paste import evidence_from_paste


def test_percentiles_are_read_from_a_line_with_their_units_and_thousands_separators() -> None:
    # Given report lines in milliseconds, seconds, a unit the line declares, and Korean seconds
    lines = [
        "p50 11.8 ms / p90 14.0 ms / p99 1,611 ms / max 1,702 ms",
        "latency (ms)   min 96.2   p50 121.7   p90 188.3   p99 29870.4",
        "p50 0.2 s, p99 31 s",
        "p50 190 ms / p99 2.3초",
    ]
    # When the runs are read
    found = [run.percentiles for run in runs(lines)]
    # Then every value is in milliseconds
    assert found == [
        {50: 11.8, 90: 14.0, 99: 1611.0},
        {50: 121.7, 90: 188.3, 99: 29870.4},
        {50: 200.0, 99: 31000.0},
        {50: 190.0, 99: 2300.0},
    ]


def test_a_table_gives_one_run_per_row_and_a_line_with_one_percentile_is_no_run() -> None:
    # Given a Markdown table with percentile columns, and lines that name only one percentile
    lines = [
        "| run | warmup | p50 (ms) | p90 (ms) | p99 (s) |",
        "|---|---|---|---|---|",
        "| A | 5 | 191 | 236 | 31.2 |",
        "| B | 15 | 188 | 229 | 0.253 |",
        "the SLO is p99 200 ms",
        "p99 was 31 s in the draft",
    ]
    # When the runs are read
    found = runs(lines)
    # Then each row is a run in milliseconds, and the lone percentiles are not
    assert [run.percentiles for run in found] == [
        {50: 191.0, 90: 236.0, 99: 31200.0},
        {50: 188.0, 90: 229.0, 99: 253.0},
    ]


def test_a_tail_is_a_p99_ten_times_its_p90_and_past_a_second() -> None:
    # Given a run with a cold tail, one whose p99 is high but near its p90, and one ten times over but fast
    cold = "p50 19.8 ms · p90 23.7 ms · p99 1611.4 ms"
    slow_everywhere = "p50 900 ms, p90 1,400 ms, p99 2,100 ms"
    fast = "p50 1.1 ms, p90 1.3 ms, p99 40 ms"
    # When each is read
    # Then only the first is a tail, with its ratio
    worst = worst_tail([cold, slow_everywhere, fast])
    assert worst is not None
    assert worst[0].line == cold
    assert round(worst[1][2]) == 68
    assert worst_tail([slow_everywhere, fast]) is None


def test_a_first_call_in_seconds_before_calls_in_milliseconds_is_read_in_either_language() -> None:
    # Given lines that give a first call's seconds and the later calls' milliseconds, and lines that do not
    cold = [
        "The first request took 38.4 s, then 28-31 ms for every call after it.",
        "첫 요청만 41초 걸리고 그 뒤로는 29~33ms 나와요",
        "first b=8 call 47.7 s then 40 ms",
    ]
    warm = [
        "The first request took 1.2 s, then 30 ms.",  # a second is no load
        "first request 38 s then 20 s",  # every call slow
        "p50 30 ms, p99 38 s",
    ]
    # Then only the first three say so
    assert [bool(cold_first_calls(line)) for line in cold] == [True, True, True]
    assert [bool(cold_first_calls(line)) for line in warm] == [False, False, False]


def test_a_slow_first_call_names_the_engine_that_works_then_and_nothing_without_one() -> None:
    said = "The first request took 38.4 s, then 28-31 ms."
    # Given the same figures on an LMI image, on a TensorRT engine, and on an engine the paste does not name
    lmi = diagnose(
        evidence_from_paste(f"djl-inference:0.33.0-lmi15.0.0-cu128 on ml.g5.2xlarge.\n{said}", origin="t")
    )
    trt = diagnose(
        evidence_from_paste(f"Triton with the TensorRT model.plan on ml.g5.2xlarge.\n{said}", origin="t")
    )
    bare = diagnose(evidence_from_paste(said, origin="t"))
    # Then LMI's lazy load, TensorRT's build, and unknown
    assert (lmi.id, trt.id, bare.id) == ("F18", "F21", "unknown")


def test_a_slow_first_call_on_a_serverless_endpoint_is_its_cold_start() -> None:
    # Given the same figures on an endpoint the paste calls serverless, in either language
    for said in (
        "Serverless endpoint, LMI image: the first request took 14 s, then 30 ms.",
        "서버리스 첫 호출이 14초 걸리고 그 뒤로는 30ms.",
    ):
        # Then no entry is named, not even as a candidate
        diagnosis = diagnose(evidence_from_paste(said, origin="t"))
        assert diagnosis.id == "unknown" and not diagnosis.alternatives, said


def test_a_csv_export_of_percentiles_is_read_by_its_header() -> None:
    # Given a metrics export with percentile columns named p50_ms and p99_ms
    lines = [
        "metric,endpoint,run,warmup,p50_ms,p99_ms",
        "latency,rt-c6i,A,3,14.2,1611.7",
        "latency,rt-c6i,B,20,14.0,20.4",
    ]
    # Then each row is a run in milliseconds, and the first is a tail
    assert [run.percentiles for run in runs(lines)] == [{50: 14.2, 99: 1611.7}, {50: 14.0, 99: 20.4}]
    found = worst_tail(lines)
    assert found is not None and found[0].line.startswith("latency,rt-c6i,A")
