"""The ``deploybench`` application: the one place where every command module is registered.

Command modules never import this module; ``workflows.cli.main`` imports it when the command line runs.

Every command follows ``workflows/cli/output.py``: the result on stdout (``--json`` for scripts),
errors and warnings on stderr, the documented exit codes, ``--region``/``--profile`` where AWS is
reached. Help text comes through ``workflows/cli/help.py``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from workflows.cli import (
    bench,
    catalogue,
    convert,
    definition,
    diagnose,
    doctor,
    follow,
    images,
    janitor,
    pipeline_input,
    preflight,
    report,
    run,
    scale_timing,
    schema,
    stop,
    sweep,
)
from workflows.cli.help import PlainGroup

app = typer.Typer(
    cls=PlainGroup,
    add_completion=False,
    no_args_is_help=True,
    # -h as well as --help, on every command: click passes the names down to each subcommand's context.
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Convert, deploy, benchmark and tear down encoders on SageMaker.",
)


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


app.command()(run.run)
app.command(name="follow")(follow.follow_execution)
app.command()(stop.stop)
app.command()(schema.schema)
app.command()(definition.definition)
app.command()(preflight.preflight)
app.command()(diagnose.diagnose)
app.command(name="bench")(bench.bench)
app.command(name="report")(report.report)
app.command()(sweep.sweep)
app.command()(janitor.janitor)
app.command(name="input")(pipeline_input.pipeline_input)
app.command()(convert.convert)
app.command(name="scale-timing")(scale_timing.scale_timing)
app.command()(catalogue.catalogue)
app.command()(images.images)
app.command(name="doctor")(doctor.doctor_command)
