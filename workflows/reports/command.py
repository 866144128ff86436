"""The ``deploybench report`` command: Markdown with plots for one result, or a comparison."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workflows.errors import DeploybenchError


def report(
    results: Annotated[list[Path], typer.Argument(help="result.json files; the first is the baseline.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for report.md and the plots.")] = Path(
        "deploybench-report"
    ),
) -> None:
    """Write report.md with PNG plots; with several results, a comparison with regression verdicts."""
    from workflows.cli import console, fail
    from workflows.reports.files import write_report
    from workflows.reports.result import load_result

    try:
        loaded = [load_result(path) for path in results]
    except DeploybenchError as error:
        fail(error)
    for path in write_report(loaded, out):
        console.print(f"wrote {path}")
