"""``deploybench schema``: the JSON Schema of the run spec."""

from __future__ import annotations

import sys

from workflows.cli.options import JsonOption
from workflows.cli.output import guarded


@guarded
def schema(as_json: JsonOption = False) -> None:
    """Print the run spec's JSON Schema (it is JSON with or without --json)."""
    from workflows.spec.pipeline import json_schema

    sys.stdout.write(json_schema() + "\n")
