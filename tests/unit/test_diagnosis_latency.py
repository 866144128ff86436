"""A latency report's percentiles, read from lines and tables, and the tail that says the p99 measured cold
starts or loading workers."""

from __future__ import annotations

from workflows.diagnosis.latency import runs, worst_tail


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
