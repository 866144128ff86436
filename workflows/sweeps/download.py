"""A sweep's folder on disk, complete: its summary and report, each run's result.json, report.md
and plots beside them, and the sweep's own plots.

The CLI calls this once the sweep ends, on AWS and locally alike; locally it must run before the
embedded engine stops, since its bucket lives in memory. Layout::

    <sweep id>/summary.json, report.md      as CompareWithBaseline wrote them (report.md gains the plots)
    <sweep id>/plots/*.png                  p99 against throughput; USD per 1M against p99
    <sweep id>/runs/<run id>/               result.json, report.md and plots of each run
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workflows.aws.storage import download_folder
from workflows.naming import results_prefix
from workflows.sweeps.plots import plots_section, write_sweep_plots

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

RUNS_DIR = "runs"
# What a run's results prefix holds besides its report: the engine's detail file (every sample,
# already in result.json) and the processing job's raw output; neither is needed to read a run.
_SKIPPED = ("benchmark.json", "benchmark-job/")


def _summary(folder: Path) -> dict[str, Any] | None:
    path = folder / "summary.json"
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else None


def keep_runs(s3: S3Client, bucket: str, folder: Path) -> list[Path]:
    """Each run's result files from its results prefix into ``folder/runs/<run id>/``."""
    summary = _summary(folder) or {}
    written: list[Path] = []
    for run in summary.get("runs") or []:
        if not run.get("result_uri"):
            continue
        target = folder / RUNS_DIR / run["run_id"]
        files = download_folder(s3, f"s3://{bucket}/{results_prefix(run['run_id'])}", target)
        for path in files:
            relative = path.relative_to(target).as_posix()
            if any(relative == skip or relative.startswith(skip) for skip in _SKIPPED):
                path.unlink()
            else:
                written.append(path)
    return written


def finish_folder(s3: S3Client, bucket: str, folder: Path) -> tuple[list[Path], str | None]:
    """Runs' files and the sweep's plots into ``folder``; returns what was written and the decision.

    The report gains a Plots section and a link to each run's report on disk.
    """
    summary = _summary(folder)
    if summary is None:
        return [], None
    written = keep_runs(s3, bucket, folder)
    plots = write_sweep_plots(summary, folder)
    written += [folder / file for file in plots.values()]
    report = folder / "report.md"
    if report.exists():
        reports = sorted(p for p in written if p.name == "report.md")
        links = "".join(f"- [{p.parent.name}]({p.relative_to(folder).as_posix()})\n" for p in reports)
        extra = plots_section(plots) + (f"\n## Each run's report\n\n{links}" if links else "")
        report.write_text(report.read_text(encoding="utf-8") + extra, encoding="utf-8")
    return written, summary.get("decision")
