"""The README's first command, on the real MiniLM: a user's run from the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
import yaml

from tests.conftest import ROOT


@pytest.mark.e2e
def test_example_spec_runs_end_to_end_on_the_local_engine(tmp_path: Path) -> None:
    # When the example spec runs from the command line
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "workflows.cli",
            "run",
            str(ROOT / "examples" / "minilm-realtime.yaml"),
            "--local",
            "--results-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=ROOT,
    )
    # Then the execution succeeded and said so
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-4000:]
    assert "Execution SUCCEEDED" in completed.stdout
    # And a result JSON has latency percentiles for every shape of the spec, and the plan was printed first
    assert "plan: 4 shapes, 8 measurements" in completed.stdout
    [result_path] = list(tmp_path.glob("*/result.json"))
    result = json.loads(result_path.read_text())
    assert result["status"] == "SUCCEEDED"
    assert result["convert"]["manifest"]["architecture"] == "BertModel"
    shapes = {(s["batch_size"], s["sequence_length"]): s for s in result["benchmark"]["shapes"]}
    spec = yaml.safe_load((ROOT / "examples" / "minilm-realtime.yaml").read_text())["benchmark"]
    assert set(shapes) == {(b, s) for b in spec["batch_sizes"] for s in spec["sequence_lengths"]}
    for figures in shapes.values():
        assert 0 < figures["p50_ms"] <= figures["p90_ms"] <= figures["p99_ms"] <= figures["max_ms"]
        assert figures["samples_per_s"] > 0
    assert (result_path.parent / "report.md").read_text().startswith("# deploybench run")
    # And nothing was left running
    assert any(d.startswith("endpoint/") for d in result["teardown"]["deleted"])
    leftovers = [
        p for p in psutil.process_iter(["cmdline"]) if str(tmp_path) in " ".join(p.info.get("cmdline") or [])
    ]
    assert leftovers == []
