"""``deploybench preflight``: every static check of the failure catalogue on a spec and its artifact."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from workflows.cli.options import JsonOption, ProfileOption, RegionOption
from workflows.cli.output import FAILED, OK, aws_session, emit, guarded, print_table
from workflows.cli.output import out as console
from workflows.contracts import PreflightResult

DEFAULT_REGION = "us-east-1"


def preflight_json(result: PreflightResult, region: str) -> dict[str, Any]:
    """The result for scripts: each finding says whether it blocks, and the result whether it blocked."""
    data = result.model_dump(mode="json")
    for finding in data["findings"]:
        finding["blocking"] = finding["severity"] == "blocking"
    data["blocked"] = any(f["blocking"] for f in data["findings"])
    data["region"] = region
    return data


def _print_preflight(result: PreflightResult, spec_path: Path, region: str) -> None:
    if result.findings:
        table = Table(title=f"Preflight findings for {spec_path}", show_lines=True)
        for column in ("ID", "severity", "finding", "fix"):
            table.add_column(column, overflow="fold")
        for f in result.findings:
            style = "bold red" if f.severity == "blocking" else "yellow"
            table.add_row(f.id, f"[{style}]{f.severity}[/]", escape(f.message), escape(f.fix))
        print_table(table)
    else:
        console.print(f"[green]No findings[/] for {escape(str(spec_path))}.")
    console.print(f"Region: {region}")
    console.print("Checked: " + ("; ".join(result.checked) or "nothing"))
    if result.skipped:
        console.print("[yellow]Skipped[/]: " + "; ".join(result.skipped))


@guarded
def preflight(
    spec_path: Annotated[
        Path, typer.Argument(metavar="SPEC", help="YAML run spec, e.g. examples/minilm-realtime.yaml")
    ],
    artifact: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR_OR_TARBALL",
            help="Converted artifact folder or packed model.tar.gz, for the artifact-level checks.",
        ),
    ] = None,
    region: RegionOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run the failure catalogue's static checks on SPEC before anything is created; exit 1 on a blocking finding.

    Images resolve for the region of --region, AWS_REGION, AWS_DEFAULT_REGION or the profile
    (us-east-1 when none is set); no AWS call is made.
    """
    from workflows.hosting.modes import run_checks
    from workflows.preflight import build_context, open_artifact
    from workflows.preflight.triton import check_repository_result, is_model_repository
    from workflows.spec.pipeline import load_spec

    where = aws_session(region, profile).region_name or DEFAULT_REGION
    spec = load_spec(spec_path)
    with tempfile.TemporaryDirectory(prefix="deploybench-preflight-") as scratch:
        if artifact is not None and is_model_repository(artifact):
            result = check_repository_result(artifact)
        else:
            view = open_artifact(artifact, Path(scratch)) if artifact is not None else None
            result = run_checks(build_context(spec, view, region=where))
    emit(
        preflight_json(result, where),
        as_json=as_json,
        human=lambda: _print_preflight(result, spec_path, where),
    )
    raise typer.Exit(FAILED if any(f.severity == "blocking" for f in result.findings) else OK)
