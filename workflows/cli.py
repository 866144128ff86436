"""The ``deploybench`` command line.

Every command follows ``workflows/cli_output.py``: the result on stdout (``--json`` for scripts),
errors and warnings on stderr, the documented exit codes, ``--region``/``--profile`` where AWS is
reached. Help text comes through ``workflows/cli_help.py``.
"""

from __future__ import annotations

from typing import Annotated, Any, NoReturn

import typer

from workflows import (
    bench_command,
    catalogue_command,
    cli_checks,
    convert_command,
    definition_command,
    doctor_aws,
    follow_command,
    images_command,
    operations_cli,
    report_cli,
    run_command,
    scale_timing_command,
)
from workflows.cli_help import PlainGroup
from workflows.cli_output import USAGE, fail_with, out
from workflows.errors import DeploybenchError

app = typer.Typer(
    cls=PlainGroup,
    add_completion=False,
    no_args_is_help=True,
    help="Convert, deploy, benchmark and tear down encoders on SageMaker.",
)
console = out
"""The result console (stdout); kept for modules written before ``workflows.cli_output``."""


def fail(error: DeploybenchError, code: int = USAGE) -> NoReturn:
    """A workflow error on stderr, then exit (``workflows.cli_output.fail_with`` under its old name)."""
    fail_with(error, code=code)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"deploybench {version('deploybench')}")
        raise typer.Exit(0)


@app.callback()
def _main(
    show_version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Convert, deploy, benchmark and tear down encoders on SageMaker."""


app.command()(run_command.run)
app.command(name="follow")(follow_command.follow_execution)
app.command()(definition_command.schema)
app.command()(definition_command.definition)
app.command()(cli_checks.preflight)
app.command()(cli_checks.diagnose)
app.command(name="bench")(bench_command.bench)
app.command(name="report")(report_cli.report)
app.command()(operations_cli.sweep)
app.command()(operations_cli.janitor)
app.command(name="input")(operations_cli.pipeline_input)
app.command()(convert_command.convert)
app.command(name="scale-timing")(scale_timing_command.scale_timing)
app.command()(catalogue_command.catalogue)
app.command()(images_command.images)
app.command(name="doctor")(doctor_aws.doctor_command)


def main(argv: list[str] | None = None) -> Any:
    return app(argv)


if __name__ == "__main__":
    main()
