"""One example spec per hosting mode under examples/: each loads and passes ``deploybench preflight``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import ROOT
from workflows.cli.app import app
from workflows.errors import NotServableLocally
from workflows.hosting.modes import refuse_unservable_locally, strategies
from workflows.spec.pipeline import load_spec

runner = CliRunner()
EXAMPLES = sorted((ROOT / "examples").glob("minilm-*.yaml"))


def test_every_hosting_mode_has_exactly_one_example() -> None:
    # Given the run-spec examples
    modes = [load_spec(path).hosting.mode for path in EXAMPLES]
    # Then every mode of the strategy table appears once
    assert sorted(modes) == sorted(strategies())


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_an_example_passes_preflight_with_no_blocking_finding(path: Path) -> None:
    # When the example is checked from the command line, without an artifact
    result = runner.invoke(app, ["preflight", "--json", str(path)])
    # Then it exits 0, its own mode's checks ran, and nothing blocks
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["checked"], report
    assert [f for f in report["findings"] if f["severity"] == "blocking"] == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_an_example_says_whether_it_runs_locally(path: Path) -> None:
    # Given an example and what its header comment tells the reader
    spec = load_spec(path)
    header = path.read_text(encoding="utf-8").split("\nname:")[0]
    local = strategies()[spec.hosting.mode].local_blocker is None
    # Then a mode the local engine serves shows a --local command, and one it cannot says AWS only
    assert ("--local" in header) is local
    if not local:
        assert "AWS only" in header
        with pytest.raises(NotServableLocally, match=f"mode {spec.hosting.mode} cannot be served locally"):
            refuse_unservable_locally(spec.hosting.mode)
