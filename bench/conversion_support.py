"""What bench/convert.py, bench/bucketing.py and bench/pack.py share: converting, timing, writing figures.

Every timing here runs one intra-op thread (onnxruntime and torch): the host is shared and
noisy, one thread keeps the ratios stable, and ratios (never absolute times) are what the
figures files hold.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ["ORT_INTRA_OP_THREADS"] = "1"

RESULTS = ROOT / "bench" / "results"


def single_thread() -> None:
    import torch

    torch.set_num_threads(1)


def convert(source: Path, out: Path, *, task: str, max_length: int = 128, **convert: Any) -> Path:
    """Run the convert step's ``build_artifact`` into ``out``; its scratch (plain/fused graphs) stays beside."""
    from workflows.contracts import StepRequest
    from workflows.spec.pipeline import parse_spec
    from workflows.steps.convert_to_onnx import build_artifact

    spec = parse_spec(
        {
            "name": "bench",
            "model": {"source": str(source), "task": task, "max_sequence_length": max_length},
            "convert": convert,
            "benchmark": {"sequence_lengths": ["natural"]},
        }
    )
    build_artifact(
        StepRequest(run_id="bench", spec=spec),
        source=source,
        out=out,
        scratch=out.with_name(out.name + "-scratch"),
    )
    return out


def interleaved(functions: dict[str, Callable[[], object]], *, rounds: int) -> dict[str, float]:
    """Median milliseconds of each function, called in turn each round (noise hits all alike)."""
    for function in functions.values():
        function()
    samples: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(rounds):
        for name, function in functions.items():
            started = time.perf_counter()
            function()
            samples[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(values) for name, values in samples.items()}


def encode_shape(tokenizer: Any, shape: str) -> dict[str, Any]:
    """The INT8 benches' inputs: ``b1_natural`` one natural text; ``b8_seq128`` 8 long texts padded to 128."""
    from workflows.benchmark.texts import long_texts, natural_texts

    if shape == "b1_natural":
        return dict(tokenizer(natural_texts(1, seed=11), return_tensors="np"))
    return dict(
        tokenizer(
            long_texts(8, seed=12, words=128),
            padding="max_length",
            truncation=True,
            max_length=128,
            return_tensors="np",
        )
    )


KERNEL_FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "amx_int8", "amx_tile")


def machine() -> dict[str, Any]:
    flags = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        flags = next((line for line in cpuinfo.read_text().splitlines() if line.startswith("flags")), "")
    return {
        "cpu_count": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "avx512": "avx512f" in flags,
        "vnni": "avx512_vnni" in flags or "avx_vnni" in flags,
        # The flags onnxruntime's MLAS dispatches fp32 and int8 GEMM on.
        "cpu_flags": ",".join(f for f in KERNEL_FLAGS if f in flags.split()),
        "threads": 1,
    }


def write_figures(name: str, figures: dict[str, Any]) -> Path:
    """One flat JSON object: bench/results/<name>.json."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}")
    return path


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
