"""``deploybench report`` on the command line's conventions (the report itself: ``workflows.reports``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workflows.cli.options import JsonOption
from workflows.cli.output import RESULTS_DIR, emit, guarded, out


@guarded
def report(
    results: Annotated[
        list[Path], typer.Argument(metavar="RESULT", help="result.json files; the first is the baseline.")
    ],
    report_dir: Annotated[
        Path, typer.Option("--out", metavar="DIR", help="Folder for report.md and the plots.")
    ] = RESULTS_DIR / "report",
    as_json: JsonOption = False,
) -> None:
    """Write report.md with PNG plots; with several results, a comparison with regression verdicts."""
    from workflows.reports.files import write_report
    from workflows.reports.result import load_result

    loaded = [load_result(path) for path in results]
    files = write_report(loaded, report_dir)

    def human() -> None:
        for path in files:
            out.print(f"wrote {path}")

    emit(
        {"report_dir": str(report_dir), "files": [str(path) for path in files]}, as_json=as_json, human=human
    )
