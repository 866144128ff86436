"""The stack's Regions setting reaches the janitor: the Regions runs may use, swept besides the stack's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra.constants import CONTEXT_JANITOR_REGIONS, STACK_NAME
from workflows.janitor.cleanup import REGIONS_ENV


def _janitor_environment(outdir: Path, context: dict[str, object]) -> dict[str, object]:
    from infra.app import build_app

    app, _ = build_app(outdir=str(outdir), context=context)
    app.synth()
    template = json.loads((outdir / f"{STACK_NAME}.template.json").read_text())
    [janitor] = [
        r["Properties"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function"
        and r["Properties"].get("FunctionName") == "deploybench-janitor"
    ]
    return dict(janitor["Environment"]["Variables"])


@pytest.mark.parametrize("given", ["us-east-1, us-west-2", ["us-east-1", "us-west-2"]])
def test_the_regions_setting_is_the_janitors_environment(tmp_path: Path, given: object) -> None:
    # Given the janitorRegions context, as a comma-separated string (-c on the command line) or a list (cdk.json)
    environment = _janitor_environment(tmp_path, {CONTEXT_JANITOR_REGIONS: given})
    # Then the janitor function is told those Regions
    assert environment[REGIONS_ENV] == "us-east-1,us-west-2"


def test_without_the_setting_the_janitor_sweeps_its_own_region_only(tmp_path: Path) -> None:
    assert REGIONS_ENV not in _janitor_environment(tmp_path, {})
