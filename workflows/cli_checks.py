"""``deploybench preflight`` and ``deploybench diagnose``: the failure catalogue from the command line."""

from __future__ import annotations

import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from workflows.contracts import Diagnosis, PreflightResult
from workflows.errors import DeploybenchError

console = Console(highlight=False, soft_wrap=True)

# Exit codes: 0 clean (or diagnosed), 1 a blocking finding, 2 bad input.
BLOCKED = 1
BAD_INPUT = 2


def _refuse(message: str) -> None:
    console.print(f"[bold red]error[/]: {message}")
    raise typer.Exit(BAD_INPUT)


def _print_preflight(result: PreflightResult, spec_path: Path) -> None:
    if result.findings:
        table = Table(title=f"Preflight findings for {spec_path}", show_lines=True)
        for column in ("ID", "severity", "finding", "fix"):
            table.add_column(column, overflow="fold")
        for f in result.findings:
            style = "bold red" if f.severity == "blocking" else "yellow"
            table.add_row(f.id, f"[{style}]{f.severity}[/]", f.message, f.fix)
        console.print(table)
    else:
        console.print(f"[green]No findings[/] for {spec_path}.")
    console.print("Checked: " + ("; ".join(result.checked) or "nothing"))
    if result.skipped:
        console.print("[yellow]Skipped[/]: " + "; ".join(result.skipped))


def preflight(
    spec_path: Annotated[Path, typer.Argument(help="YAML run spec, e.g. examples/minilm-realtime.yaml")],
    artifact: Annotated[
        Path | None,
        typer.Option(help="Converted artifact folder or packed model.tar.gz, for the artifact-level checks."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Run the failure catalogue's static checks on SPEC before anything is created; exit 1 on a blocking finding."""
    from workflows.preflight import build_context, open_artifact, run_checks
    from workflows.preflight.triton import check_repository_result, is_model_repository
    from workflows.spec import load_spec

    try:
        spec = load_spec(spec_path)
        with tempfile.TemporaryDirectory(prefix="deploybench-preflight-") as scratch:
            if artifact is not None and is_model_repository(artifact):
                result = check_repository_result(artifact)
            else:
                view = open_artifact(artifact, Path(scratch)) if artifact is not None else None
                result = run_checks(build_context(spec, view))
    except DeploybenchError as error:
        _refuse(f"{type(error).__name__}: {error}")
    if as_json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        _print_preflight(result, spec_path)
    raise typer.Exit(BLOCKED if any(f.severity == "blocking" for f in result.findings) else 0)


def _print_diagnosis(diagnosis: Diagnosis) -> None:
    known = diagnosis.id != "unknown"
    colour = "red" if known else "yellow"
    console.print(f"[bold {colour}]{diagnosis.id}[/] {diagnosis.title}")
    console.print(f"  confidence {diagnosis.confidence:.2f} · action [bold]{diagnosis.action}[/]")
    if diagnosis.fix:
        console.print(f"  fix: {diagnosis.fix}")
    if diagnosis.details:
        console.print("  details: " + ", ".join(f"{k}={v}" for k, v in diagnosis.details.items()))
    console.print("  evidence:")
    for line in diagnosis.evidence:
        console.print(f"    {line}", markup=False)


def diagnose(
    endpoint: Annotated[
        str | None, typer.Option(help="Live endpoint: DescribeEndpoint and its CloudWatch log events (AWS).")
    ] = None,
    log: Annotated[
        Path | None,
        typer.Option(help="Any text: a log export, an error message, a traceback ('-' for stdin)."),
    ] = None,
    mode: Annotated[
        str | None, typer.Option(help="Hosting mode, when the evidence cannot tell (e.g. serverless).")
    ] = None,
    since_min: Annotated[int, typer.Option(help="--endpoint: read log events of the last N minutes.")] = 60,
    region: Annotated[
        str | None, typer.Option(help="--endpoint: AWS region (default: the environment's).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the diagnosis as JSON.")] = False,
) -> None:
    """Name the failure catalogue entry behind a failure, its evidence and its fix."""
    from workflows.diagnosis import diagnose as match
    from workflows.diagnosis import evidence_from_endpoint, evidence_from_text

    if (endpoint is None) == (log is None):
        _refuse("give exactly one of --endpoint NAME or --log FILE")
    if log is not None:
        evidence = evidence_from_text(_read_log(log), origin=str(log), hosting_mode=mode)
    else:
        assert endpoint is not None
        evidence = evidence_from_endpoint(
            endpoint,
            **_aws_clients(region),
            since=datetime.now(UTC) - timedelta(minutes=since_min),
            hosting_mode=mode,
        )
        if evidence.endpoint is None and not evidence.items:
            _refuse(f"nothing to diagnose for endpoint {endpoint}: " + "; ".join(evidence.notes))
    diagnosis = match(evidence)
    if as_json:
        sys.stdout.write(diagnosis.model_dump_json(indent=2) + "\n")
    else:
        _print_diagnosis(diagnosis)


def _read_log(path: Path) -> str:
    if str(path) == "-":
        return sys.stdin.read()
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        _refuse(f"log file {path} does not exist; pass a text file (a CloudWatch export, an error message)")
    except (IsADirectoryError, PermissionError) as error:
        _refuse(f"log file {path} cannot be read: {error}")
    raise AssertionError("unreachable")


def _aws_clients(region: str | None) -> dict[str, Any]:
    import boto3
    from botocore.config import Config

    config = Config(retries={"mode": "standard", "max_attempts": 5})
    return {
        "sagemaker": boto3.client("sagemaker", region_name=region, config=config),
        "logs": boto3.client("logs", region_name=region, config=config),
    }
