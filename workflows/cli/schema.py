"""``deploybench schema``: the JSON Schema of the run spec, or with ``--sweep`` of the sweep file."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from workflows.cli.options import JsonOption
from workflows.cli.output import guarded


@guarded
def schema(
    sweep: Annotated[
        bool, typer.Option("--sweep", help="The sweep file's schema (examples/sweep-nightly.yaml) instead.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Print the run spec's JSON Schema, or the sweep file's (it is JSON with or without --json)."""
    if sweep:
        from workflows.sweeps.spec import SweepSpec

        sys.stdout.write(json.dumps(SweepSpec.model_json_schema(), indent=2) + "\n")
        return
    from workflows.spec.pipeline import json_schema

    sys.stdout.write(json_schema() + "\n")
