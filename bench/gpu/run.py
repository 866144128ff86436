"""GPU figures of the served artifact: CUDA and TensorRT providers, fp32/fp16/INT8, against torch fp16.

On a machine with a CUDA GPU (onnxruntime-gpu installed, torch with CUDA): converts the model for a
GPU spec (ml.g5.xlarge) in fp32, fp16 and INT8, loads each artifact through the serving code
(``artifacts/code/inference.py`` model_fn/predict_fn, so the provider check, TensorRT options and
I/O binding are the ones an endpoint runs) with the CUDA provider, and with TensorRT (fp32, fp16),
and times it against torch fp16 eager at b1 natural and b8 padded to 128 tokens. Each shape is
called once before measuring (TensorRT builds its engine there: reported as build_s, F21), then
timed in rounds (median ms). CUDA fp32 also runs without I/O binding, to show what binding changes.

Without a CUDA GPU it says so and exits 2 without writing anything. ``--plumbing-cpu`` runs every
code path on the CPU provider instead and writes to ``--out`` only (never bench/results/): a check
of the script, labelled as such, not GPU figures.

Usage: python bench/gpu/run.py [--source bundled|FOLDER] [--rounds 50] [--out bench/results/gpu.json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

RESULT = ROOT / "bench" / "results" / "gpu.json"
SHAPES = {"b1/natural": (1, None), "b8/128": (8, 128)}
NO_GPU_EXIT = 2


def gpu_present() -> tuple[bool, str]:
    """A CUDA GPU both onnxruntime and torch can use, and why not when absent."""
    import onnxruntime

    providers = onnxruntime.get_available_providers()
    if "CUDAExecutionProvider" not in providers:
        return (
            False,
            f"onnxruntime has no CUDA provider here (available: {providers}; install onnxruntime-gpu)",
        )
    try:
        import torch
    except ImportError:
        return False, "torch is not installed"
    if not torch.cuda.is_available():
        return False, "torch sees no CUDA device"
    return True, torch.cuda.get_device_name(0)


def serving_module() -> Any:
    spec = importlib.util.spec_from_file_location(
        "served_inference", ROOT / "artifacts" / "code" / "inference.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def gpu_run_spec(source: str, precision: str, engine: str) -> Any:
    from workflows.spec.pipeline import parse_spec

    return parse_spec(
        {
            "name": "bench-gpu",
            "model": {"source": source, "task": "embedding", "max_sequence_length": 128},
            "hosting": {"instance_type_fallbacks": ["ml.g5.xlarge"]},
            "convert": {"precision": precision, "engine": engine},
            "benchmark": {"batch_sizes": [1, 8], "sequence_lengths": ["natural", 128]},
        }
    )


def build(source: str, precision: str, folder: Path) -> Path:
    from workflows.contracts import StepRequest
    from workflows.conversion.source import bundled_model_path
    from workflows.steps.convert_to_onnx import build_artifact

    path = bundled_model_path() if source == "bundled" else Path(source)
    out = folder / precision
    request = StepRequest(run_id="bench-gpu", spec=gpu_run_spec(source, precision, "onnxruntime"))
    build_artifact(request, source=path, out=out, scratch=folder / f"{precision}-scratch")
    return out


def as_tensorrt(artifact: Path, source: str, precision: str) -> Path:
    """The same artifact with a TensorRT serving plan (providers, one profile per shape)."""
    from workflows.conversion.manifest import MANIFEST_FILE
    from workflows.gpu.plan import serving_plan

    target = artifact.with_name(f"{artifact.name}-tensorrt")
    shutil.copytree(artifact, target)
    manifest = json.loads((target / MANIFEST_FILE).read_text())
    plan = serving_plan(gpu_run_spec(source, precision, "tensorrt"), manifest["onnxruntime_version"])
    manifest["serving"] = plan.model_dump(mode="json")
    (target / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2))
    return target


def payloads() -> dict[str, dict[str, Any]]:
    from workflows.benchmark.texts import long_texts, natural_texts

    return {
        "b1/natural": {"inputs": natural_texts(1, seed=5), "parameters": {"batch_size": 1}},
        "b8/128": {
            "inputs": long_texts(8, seed=6, words=200),
            "parameters": {"batch_size": 8, "padding": "max_length", "max_length": 128},
        },
    }


def timed(call: Callable[[], object], rounds: int) -> tuple[float, float]:
    """(first call s, median ms of ``rounds`` calls after it)."""
    started = time.perf_counter()
    call()
    first = time.perf_counter() - started
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return round(first, 3), round(statistics.median(samples), 3)


def bench_served(inference: Any, artifact: Path, rounds: int, *, binding: bool) -> dict[str, Any]:
    os.environ[inference.IO_BINDING_ENV] = "1" if binding else "0"
    model = inference.model_fn(str(artifact))
    figures: dict[str, Any] = {"provider": model["served_by"]["provider"], "io_binding": model["io_binding"]}
    for shape, body in payloads().items():
        first, median = timed(lambda body=body: inference.predict_fn(body, model), rounds)
        figures[shape] = {"build_s": first, "median_ms": median}
    return figures


def bench_torch(source: str, rounds: int, *, device: str) -> dict[str, Any]:
    import torch
    from transformers import AutoModel, AutoTokenizer

    from workflows.conversion.source import bundled_model_path

    path = str(bundled_model_path() if source == "bundled" else Path(source))
    tokenizer = AutoTokenizer.from_pretrained(path)
    dtype = torch.float16 if device == "cuda" else torch.float32
    model = AutoModel.from_pretrained(path, attn_implementation="eager", dtype=dtype).to(device).eval()
    figures: dict[str, Any] = {"dtype": str(dtype).removeprefix("torch."), "attention": "eager"}
    for shape, body in payloads().items():
        options = (
            {"padding": "max_length", "max_length": 128}
            if "padding" in body["parameters"]
            else {"padding": True}
        )
        encoded = tokenizer(body["inputs"], truncation=True, return_tensors="pt", **options).to(device)

        def call(encoded: Any = encoded) -> None:
            with torch.no_grad():
                hidden = model(**encoded).last_hidden_state
                mask = encoded["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                (hidden * mask).sum(1) / mask.sum(1)
            if device == "cuda":
                torch.cuda.synchronize()

        first, median = timed(call, rounds)
        figures[shape] = {"first_s": first, "median_ms": median}
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="bundled")
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--out", type=Path, default=RESULT)
    parser.add_argument(
        "--plumbing-cpu", action="store_true", help="run every path on CPU; writes --out only"
    )
    args = parser.parse_args(argv)
    present, detail = gpu_present()
    if args.plumbing_cpu:
        if args.out.resolve() == RESULT.resolve():
            print("--plumbing-cpu never writes bench/results/gpu.json: pass --out elsewhere")
            return NO_GPU_EXIT
        from workflows.container.cpu_stand_in import NOTE, STAND_IN_ENV

        os.environ[STAND_IN_ENV] = NOTE
    elif not present:
        print(f"no CUDA GPU: {detail}. Nothing measured, {args.out} not written.")
        return NO_GPU_EXIT
    inference = serving_module()
    figures: dict[str, Any] = {
        "device": detail if present and not args.plumbing_cpu else "cpu (plumbing check, not GPU figures)",
        "source": args.source,
        "rounds": args.rounds,
        "runs": {},
    }
    with tempfile.TemporaryDirectory(prefix="bench-gpu-") as folder:
        for precision in ("fp32", "fp16", "int8"):
            artifact = build(args.source, precision, Path(folder))
            figures["runs"][f"cuda/{precision}"] = bench_served(
                inference, artifact, args.rounds, binding=True
            )
            if precision == "fp32":
                figures["runs"]["cuda/fp32/no-io-binding"] = bench_served(
                    inference, artifact, args.rounds, binding=False
                )
            if precision != "int8":  # TensorRT builds from fp32 or fp16 graphs; dynamic INT8 is not its input
                trt = as_tensorrt(artifact, args.source, precision)
                figures["runs"][f"tensorrt/{precision}"] = bench_served(
                    inference, trt, args.rounds, binding=True
                )
    figures["runs"]["torch-eager"] = bench_torch(
        args.source, args.rounds, device="cpu" if args.plumbing_cpu else "cuda"
    )
    rows = [
        f"| {name} | {run.get('provider', run.get('dtype'))} | {run['b1/natural']['median_ms']} | {run['b8/128']['median_ms']} |"
        for name, run in figures["runs"].items()
    ]
    print("| run | provider | b1/natural ms | b8/128 ms |\n|---|---|---|---|\n" + "\n".join(rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
