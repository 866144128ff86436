"""`deploybench sweep --local` as a user runs it: each child run's states are printed while it runs,
the sweep's files land under deploybench-results' sweeps/<name>/<sweep id>/ with each run's own
result.json, report.md and plots beside them, and the decision sentence is printed last."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from typer.testing import CliRunner

from tests.conftest import fast_spec, serving_processes
from workflows.cli.app import app

runner = CliRunner()


def test_a_local_sweep_shows_its_child_runs_live(tiny_bert: Path, tmp_path: Path) -> None:
    # Given a one-run sweep of the tiny model
    base = fast_spec(tiny_bert).model_dump(mode="json")
    base.pop("name")
    sweep = tmp_path / "sweep.yaml"
    recommend = {"p99_ms": 10_000, "batch_size": 1}
    sweep.write_text(
        yaml.safe_dump({"name": "tiny-cli", "base": base, "matrix": {}, "recommend": recommend}),
        encoding="utf-8",
    )
    # When it runs on the local engine
    result = runner.invoke(
        app, ["sweep", str(sweep), "--local", "--time-scale", "200", "--results-dir", str(tmp_path / "out")]
    )
    # Then the child run's states are printed under its index, in order, before the sweep's end
    assert result.exit_code == 0, result.output[-4000:]
    text = result.stdout
    order = [text.index(f"run 0 {mark}") for mark in ("▶ ConvertToOnnx", "▶ DeployEndpoint", "SUCCEEDED")]
    assert order == sorted(order) and order[-1] < text.index("Sweep SUCCEEDED")
    # And its summary is under results-dir/sweeps/<name>/<sweep id>/
    [summary] = (tmp_path / "out" / "sweeps" / "tiny-cli").glob("*/summary.json")
    assert re.fullmatch(r"tiny-cli-\d{8}-\d{6}-[0-9a-f]{4}", summary.parent.name)
    # And the run's own result.json, report.md and plots stay on disk after the engine is gone
    [run_folder] = (summary.parent / "runs").iterdir()
    assert {"result.json", "report.md", "latency_vs_batch.png"} <= {p.name for p in run_folder.iterdir()}
    # And the sweep report opens with the decision, has the plots, and the CLI prints the decision last
    report = (summary.parent / "report.md").read_text(encoding="utf-8")
    assert report.splitlines()[2].startswith("**Decision: recommended: ml.c6i.xlarge realtime")
    assert "(plots/p99_vs_throughput.png)" in report
    assert text.rstrip().splitlines()[-1].startswith("Decision: recommended: ml.c6i.xlarge realtime")
    assert serving_processes() == []
