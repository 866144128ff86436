"""A GPU spec's local run from a clean clone: an empty cache (``DEPLOYBENCH_CACHE_DIR``), the real serving
stack, the pre-spend canary installing the artifact's ``onnxruntime-gpu`` pin as written, and the run
served on CPU and labelled so. Minutes: the DLC-like environment is built from nothing (once)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.gpu import provider_and_note
from workflows.cli import main
from workflows.container.cpu_stand_in import NOTE

SPEC = """\
name: gpu-clean
model: {{source: '{model}', task: embedding, max_sequence_length: 64}}
hosting: {{instance_type_fallbacks: [ml.g5.xlarge]}}
wait: {{poll_initial_s: 5, poll_max_s: 30}}
benchmark: {{batch_sizes: [1], sequence_lengths: [16], min_duration_s: 0.3, min_requests: 3,
  max_duration_s: 1.5, warmup_max_requests: 20, concurrency: [1], runner: lambda}}
"""


@pytest.mark.slow
def test_a_gpu_spec_runs_locally_from_an_empty_cache_served_on_cpu_and_says_so(
    tiny_bert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from workflows.container.environment import CACHE_ENV, SERVER_ENV

    if shutil.which("java") is None:
        pytest.skip("the DLC's Multi Model Server needs Java, which this machine lacks")
    # Given a clean clone: nothing cached, the real serving stack, and a GPU spec (onnxruntime-gpu pinned)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(SERVER_ENV, "mms")
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(model=tiny_bert), encoding="utf-8")
    results = tmp_path / "results"
    # When it is run locally
    with pytest.raises(SystemExit) as exited:
        main(["run", str(spec), "--local", "--results-dir", str(results), "--json"])
    out = capsys.readouterr()
    # Then it succeeds: the canary installed the GPU build and loaded it on CPU, and the run says so
    assert exited.value.code == 0, out.err[-3000:]
    [result_file] = results.glob("*/result.json")
    result = json.loads(result_file.read_text(encoding="utf-8"))
    canary = result["preflight"]["canary"]
    assert canary["outcome"] == "passed", canary
    assert canary["served_on"].startswith(NOTE)
    assert provider_and_note(result["warmup"]["served_by"]) == {
        "provider": "CPUExecutionProvider",
        "note": NOTE,
    }
    assert any(p.name.startswith("onnxruntime_gpu-") for p in (tmp_path / "cache").glob("dlc-*/wheelhouse/*"))
