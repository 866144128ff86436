"""A report shows each shape's n, each percentile's 95% interval (or that it is unbounded), and
why a shape is not stable, beside the figure; results written before intervals still read."""

from __future__ import annotations

import numpy as np

from tests.support.result_docs import measurement, result
from workflows.benchmark.results import ShapeStats, Utilisation
from workflows.benchmark.stats import percentile_intervals
from workflows.reports.markdown import render_report


def _row(report: str, first_cells: str) -> list[str]:
    line = next(line for line in report.splitlines() if line.startswith(first_cells))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_a_shape_cut_short_shows_its_n_its_unbounded_p99_and_why_it_is_not_stable() -> None:
    # Given a shape that stopped at max_duration_s after six requests, with its intervals recorded
    latencies = np.array([410.0, 450.0, 470.0, 520.0, 560.0, 602.0])
    short = {
        **measurement(480.0, batch=8, sequence=128, samples=6),
        **percentile_intervals(latencies),
        "stable": False,
        "stop_reason": "max_duration",
        "unstable_reason": "6 requests in the kept windows < min_requests 30",
    }
    # When its report is rendered
    report = render_report(result("short-1", [short]))
    cells = _row(report, "| 8 | 128 | 1 |")
    # Then the row shows n = 6, p99 bounded only from below, and the reason it is not stable
    assert cells[3] == "6"
    assert cells[6].endswith("(≥ 560.00, unbounded above)")
    assert cells[-1] == "no: 6 requests in the kept windows < min_requests 30"
    assert "| n | p50 ms (95% CI) |" in report


def test_a_result_written_before_intervals_gets_them_from_its_samples() -> None:
    # Given a schema-2 result with 600 latency samples and no interval fields (an old baseline)
    old = measurement(10.0, samples=600)
    assert "p99_ci_ms" not in old
    # When its report is rendered
    cells = _row(render_report(result("old-1", [old])), "| 1 | natural | 1 |")
    # Then n is 600, p50 and p99 each have a finite interval around the figure, and it is stable
    expected = percentile_intervals(np.asarray(old["latencies_ms"]))
    low, high = expected["p99_ci_ms"]
    assert cells[3] == "600"
    assert cells[6].endswith(f"({low:.2f}–{high:.2f})")
    assert cells[-1] == "yes"


def _shape(utilisation: Utilisation | None, *, batch: int) -> dict[str, object]:
    stats = ShapeStats(
        **{k: v for k, v in measurement(12.0, batch=batch).items() if k in ShapeStats.model_fields},
        utilisation=utilisation,
    )
    return stats.model_dump(mode="json")


def test_utilisation_sits_beside_the_figures_and_a_shape_at_a_ceiling_is_flagged() -> None:
    # Given a result whose b1 shape read CPU at 96% locally, whose b4 shape read a GPU near full,
    # and whose b8 shape read nothing
    hot = Utilisation(source="local", cpu_pct=96.4, memory_pct=12.2)
    gpu = Utilisation(source="cloudwatch", cpu_pct=40.0, memory_pct=30.0, gpu_pct=88.0, gpu_memory_pct=97.0)
    rows = [_shape(hot, batch=1), _shape(gpu, batch=4), _shape(None, batch=8)]
    # When its report is rendered
    report = render_report(result("util-1", rows))
    header = _row(report, "| batch |")
    b1, b4, b8 = (_row(report, f"| {b} | natural | 1 |") for b in (1, 4, 8))
    at = header.index("CPU %")
    # Then the utilisation columns follow samples/s and req/s, each shape shows its own figures,
    # source and ceiling, a shape without any shows dashes, and the note names both sources
    assert header[at - 2 : at] == ["samples/s", "req/s"]
    assert b1[at : at + 6] == ["96", "12", "-", "-", "local", "**CPU 96% >= 90%**"]
    assert b4[at : at + 6] == ["40", "30", "88", "97", "cloudwatch", "**GPU memory 97% >= 95%**"]
    assert b8[at : at + 6] == ["-"] * 6
    assert "local: the local serving process group's own /proc figures" in report
    assert "cloudwatch: the endpoint's instance and container metrics" in report


def test_a_result_without_utilisation_keeps_its_table() -> None:
    # Given a result whose shapes read no utilisation (an older result, or a run that read none)
    rows = [_shape(None, batch=1)]
    # When its report is rendered
    report = render_report(result("plain-1", rows))
    # Then no utilisation column or note appears, and samples/s is still followed by req/s, errors
    header = _row(report, "| batch |")
    assert "CPU %" not in header and "Utilisation:" not in report
    assert header[header.index("samples/s") + 1 : header.index("samples/s") + 3] == ["req/s", "errors"]
