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
    local: Annotated[
        bool,
        typer.Option(
            "--local",
            help="Check as `run --local` does: the local engine's modes and region, no AWS read.",
        ),
    ] = False,
    region: RegionOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run the failure catalogue's checks on SPEC before anything is created; exit 1 on a blocking finding.

    The same gate as `run` and the pipeline's CheckSpec (workflows/hosting/gate.py): the region,
    the model source, the images, the hosting mode's checks and, on AWS, the account's SageMaker
    quotas (read with the credentials of --profile / AWS_PROFILE when there are any; skipped, and
    said so, when there are none). Images resolve for the region of --region, AWS_REGION,
    AWS_DEFAULT_REGION or the profile (us-east-1 when none is set).
    """
    from workflows.hosting.gate import GateClients, gate
    from workflows.hosting.modes import run_checks
    from workflows.preflight import build_context, open_artifact
    from workflows.preflight.gate import LOCAL_REGION
    from workflows.preflight.triton import check_repository_result, is_model_repository
    from workflows.spec.pipeline import load_spec
    from workflows.steps.check_spec import gate_clients

    spec = load_spec(spec_path)
    if local:
        where, clients = LOCAL_REGION, GateClients()
    else:
        session = aws_session(region, profile)
        where = session.region_name or DEFAULT_REGION
        clients = gate_clients(spec, session)
    result = gate(spec, region=where, local=local, clients=clients)
    with tempfile.TemporaryDirectory(prefix="deploybench-preflight-") as scratch:
        if artifact is not None and is_model_repository(artifact):
            further = check_repository_result(artifact)
        else:
            view = open_artifact(artifact, Path(scratch)) if artifact is not None else None
            further = run_checks(build_context(spec, view, region=where), "artifact")
    result = result.model_copy(
        update={
            "findings": sorted([*result.findings, *further.findings], key=lambda f: f.severity != "blocking"),
            "checked": [*result.checked, *further.checked],
            "skipped": [*result.skipped, *further.skipped],
        }
    )
    emit(
        preflight_json(result, where),
        as_json=as_json,
        human=lambda: _print_preflight(result, spec_path, where),
    )
    raise typer.Exit(FAILED if any(f.severity == "blocking" for f in result.findings) else OK)
