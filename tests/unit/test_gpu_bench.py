"""bench/gpu/run.py prepared on CPU: it refuses to measure without a GPU, and its paths run (plumbing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

SCRIPT = ROOT / "bench" / "gpu" / "run.py"


def test_without_a_gpu_it_says_so_and_writes_nothing(tmp_path: Path) -> None:
    # Given this machine, which has no CUDA GPU
    out = tmp_path / "gpu.json"
    # When the GPU benchmark runs
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out)], capture_output=True, text=True, timeout=300
    )
    # Then it exits non-zero, says why, and writes no figures
    assert done.returncode == 2
    assert done.stdout.startswith("no CUDA GPU: onnxruntime has no CUDA provider here")
    assert not out.exists()


def test_the_plumbing_check_runs_every_path_on_cpu_and_labels_it(tiny_bert: Path, tmp_path: Path) -> None:
    # When every path (fp32/fp16/INT8 on the CUDA plan, TensorRT plans, no binding, torch) runs on CPU
    out = tmp_path / "plumbing.json"
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--plumbing-cpu",
            "--source",
            str(tiny_bert),
            "--rounds",
            "2",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    figures = json.loads(out.read_text())
    # Then it is labelled a CPU plumbing check, and every run names the provider that really ran it
    assert figures["device"] == "cpu (plumbing check, not GPU figures)"
    assert set(figures["runs"]) == {
        "cuda/fp32",
        "cuda/fp32/no-io-binding",
        "tensorrt/fp32",
        "cuda/fp16",
        "tensorrt/fp16",
        "cuda/int8",
        "torch-eager",
    }
    served = [run for name, run in figures["runs"].items() if name != "torch-eager"]
    assert {run["provider"] for run in served} == {"CPUExecutionProvider"}
    assert all(
        run[shape]["median_ms"] > 0 for run in figures["runs"].values() for shape in ("b1/natural", "b8/128")
    )
    # And it refuses to put a plumbing run where GPU figures belong
    refused = subprocess.run(
        [sys.executable, str(SCRIPT), "--plumbing-cpu"], capture_output=True, text=True, timeout=300
    )
    assert refused.returncode == 2 and "never writes bench/results/gpu.json" in refused.stdout
