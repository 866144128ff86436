"""``deploybench input``: the execution input a spec (or a sweep spec) starts its state machine with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from workflows.cli.options import JsonOption
from workflows.cli.output import guarded


@guarded
def pipeline_input(
    path: Annotated[Path, typer.Argument(metavar="FILE", help="A run spec, or with --sweep a sweep file.")],
    is_sweep: Annotated[
        bool, typer.Option("--sweep", help="FILE is a sweep: print the sweep's input.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Print a state machine's input as JSON, for `aws stepfunctions start-execution --input file://...`."""
    import sys

    if is_sweep:
        from workflows.sweeps.spec import load_sweep

        payload: dict[str, Any] = {"sweep": load_sweep(path).model_dump(mode="json")}
    else:
        from workflows.contracts import PipelineState
        from workflows.naming import new_run_id
        from workflows.spec.pipeline import load_spec

        spec = load_spec(path)
        payload = PipelineState(run_id=new_run_id(spec.name), spec=spec).model_dump(mode="json")
    sys.stdout.write(json.dumps(payload, indent=2) + "\n")
