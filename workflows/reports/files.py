"""Write a report folder: result.json (single result), report.md and its PNG plots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workflows.reports.compare import compare
from workflows.reports.markdown import render_comparison, render_report
from workflows.reports.plots import write_plots

RESULT_FILE = "result.json"
REPORT_FILE = "report.md"


def write_report(results: list[dict[str, Any]], out: Path, *, with_result: bool = False) -> list[Path]:
    """One result: its full report. Several: side by side, each judged against the first."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    if with_result and len(results) == 1:
        path = out / RESULT_FILE
        path.write_text(json.dumps(results[0], indent=2), encoding="utf-8")
        written.append(path)
    plots = write_plots(results, out)
    written += [out / file for file in plots.values()]
    if len(results) == 1:
        text = render_report(results[0], plots)
    else:
        text = render_comparison(results, [compare(results[0], other) for other in results[1:]], plots)
    (out / REPORT_FILE).write_text(text, encoding="utf-8")
    return [*written, out / REPORT_FILE]
