"""Conversion speed and INT8 quality: PyTorch vs the graphs the convert step builds.

Per family, the convert step runs twice (fp32 with ``optimize: auto``, and INT8); the graphs are
then timed side by side in interleaved rounds at one intra-op thread (torch too):

- torch: the Hugging Face model in eager mode at its default attention (sdpa for BERT/XLM-R),
  with the same pooling as the graph;
- plain: the TorchScript export, which onnxruntime fuses at session load;
- fused: the offline-fused graph (BERT/XLM-R only), whether or not 'auto' shipped it;
- fp32: what the convert step shipped;
- int8: the INT8 artifact (outlier channels in fp32), and int8-nosplit (plain quantize_dynamic).

Shapes: b1 = one natural text; b8 = 8 texts padded to 128 tokens; b32 = 32 natural texts as one
batch padded to the longest. MiniLM has real weights; XLM-R and DeBERTa-v2 are random 6-layer
H384 classifiers built from configs (their INT8 figures say nothing about trained models).
Targets (MiniLM): fp32 >= 2.0x torch at b1; INT8 >= 4x at b1 and >= 2x at b8 with cosine >= 0.99.

Usage: python bench/convert.py [--families bert,xlm-roberta,deberta-v2] [--rounds 30]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from conversion_support import convert, interleaved, machine, single_thread, table, write_figures

PREFIX = {"bert": "", "xlm-roberta": "xlmr_", "deberta-v2": "deberta_"}
TASK = {"bert": "embedding", "xlm-roberta": "classification", "deberta-v2": "classification"}


def shapes(tokenizer: Any) -> dict[str, dict[str, np.ndarray]]:
    from workflows.benchmark.texts import long_texts, natural_texts

    def encode(texts: list[str], **options: Any) -> dict[str, np.ndarray]:
        encoded = tokenizer(texts, truncation=True, return_tensors="np", **options)
        return {k: v.astype(np.int64) for k, v in encoded.items()}

    return {
        "b1": encode(natural_texts(1, seed=21)),
        "b8": encode(long_texts(8, seed=22, words=200), padding="max_length", max_length=128),
        "b32": encode(natural_texts(32, seed=23), padding=True, max_length=256),
    }


def torch_runner(source: Path, task: str) -> Callable[[dict[str, np.ndarray]], Any]:
    import torch
    from transformers import AutoModel, AutoModelForSequenceClassification

    from workflows.conversion.export import encoder_graph
    from workflows.conversion.pooling import choose_pooling

    loader = AutoModelForSequenceClassification if task == "classification" else AutoModel
    model = loader.from_pretrained(str(source)).eval()  # default attention: sdpa where it exists
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if model.config.type_vocab_size > 1 else [])
    chosen = choose_pooling(source, pooling="auto", normalize=None)
    pooling, normalize = (chosen.mode, chosen.normalize) if task == "embedding" else ("mean", False)
    graph = encoder_graph(model, task, names, pooling, normalize)

    def run(batch: dict[str, np.ndarray]) -> Any:
        with torch.inference_mode():
            return graph(*(torch.from_numpy(batch[n]) for n in names))

    return run


def onnx_runner(path: Path) -> Callable[[dict[str, np.ndarray]], Any]:
    from workflows.conversion.parity import feed_for, ort_session

    session = ort_session(path, threads=1)
    return lambda batch: session.run(None, feed_for(session, batch))


def source_for(family: str, folder: Path) -> Path:
    from workflows.conversion.random_models import build_random_model
    from workflows.conversion.source import bundled_model_path

    if family == "bert":
        return bundled_model_path()
    return build_random_model(family, folder / family, task=TASK[family], hidden=384, layers=6, heads=12)


def bench_family(family: str, folder: Path, rounds: int) -> tuple[dict[str, Any], list[list[str]]]:
    from transformers import AutoTokenizer

    from workflows.conversion import parity
    from workflows.conversion.manifest import read_manifest
    from workflows.conversion.quantize import quantize_graph, save_calibration

    task, source = TASK[family], source_for(family, folder)
    fp32 = convert(source, folder / f"{family}-fp32", task=task)
    int8 = convert(source, folder / f"{family}-int8", task=task, precision="int8")
    scratch = folder / f"{family}-fp32-scratch"
    fp32_manifest, int8_manifest = read_manifest(fp32), read_manifest(int8)
    tokenizer = AutoTokenizer.from_pretrained(str(fp32 / "tokenizer"))
    nosplit = folder / f"{family}-int8-nosplit.onnx"
    calibration = save_calibration([], folder / "empty.npz")
    quantize_graph(str(scratch / "export.onnx"), str(nosplit), str(calibration), split=False)
    batches = parity.check_batches(tokenizer, parity.validation_items(task), max_length=256)
    reference = parity.run_onnx(scratch / "export.onnx", batches)
    nosplit_cosines = parity.cosines(reference, parity.run_onnx(nosplit, batches))

    graphs = {"plain": scratch / "export.onnx"}
    if (scratch / "fused.onnx").exists():
        graphs["fused"] = scratch / "fused.onnx"
    graphs |= {
        "fp32": fp32 / fp32_manifest.onnx_file,
        "int8": int8 / int8_manifest.onnx_file,
        "int8-nosplit": nosplit,
    }
    runners = {"torch": torch_runner(source, task)} | {
        name: onnx_runner(path) for name, path in graphs.items()
    }
    ms: dict[str, dict[str, float]] = {}
    for shape, batch in shapes(tokenizer).items():
        ms[shape] = interleaved(
            {name: (lambda run=run, batch=batch: run(batch)) for name, run in runners.items()},
            rounds=rounds if shape == "b1" else max(3, rounds // 6),
        )
        print(
            f"  {family} {shape} {tuple(batch['input_ids'].shape)}: "
            + ", ".join(f"{k} {v:.1f} ms" for k, v in ms[shape].items())
        )

    prefix, quant = PREFIX[family], int8_manifest.quantization
    assert quant is not None
    figures: dict[str, Any] = {
        f"{prefix}fp32_shipped": "fused"
        if "fused" in graphs and filecmp.cmp(graphs["fused"], graphs["fp32"], shallow=False)
        else "plain",
        f"{prefix}int8_min_cosine": round(quant.min_cosine, 4),
        f"{prefix}int8_mean_cosine": round(quant.mean_cosine, 4),
        f"{prefix}int8_nosplit_min_cosine": round(float(nosplit_cosines.min()), 4),
        f"{prefix}int8_size_ratio": quant.size_ratio,
        f"{prefix}int8_outlier_channels": quant.outlier_channels,
    }
    if quant.argmax_agreement is not None:
        figures[f"{prefix}int8_argmax_agreement"] = quant.argmax_agreement
    rows = []
    for name in runners:
        cells = [f"{family} {name}"]
        for shape in ms:
            ratio = ms[shape]["torch"] / ms[shape][name]
            cells.append(f"{ms[shape][name]:.1f} (x{ratio:.2f})")
            if name != "torch":
                figures[f"{prefix}{name.replace('-', '_')}_vs_torch_{shape}"] = round(ratio, 3)
        rows.append(cells)
    figures[f"{prefix}fp32_optimization"] = fp32_manifest.optimization
    print("  " + json.dumps({k: v for k, v in figures.items() if "cosine" in k or "shipped" in k}))
    return figures, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default="bert,xlm-roberta,deberta-v2")
    parser.add_argument("--rounds", type=int, default=30, help="rounds at b1 (b8 and b32 get a sixth)")
    args = parser.parse_args()
    single_thread()
    figures: dict[str, Any] = {}
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-convert-") as folder:
        for family in args.families.split(","):
            found, family_rows = bench_family(family, Path(folder), args.rounds)
            figures |= found
            rows += family_rows
    print(table(["graph", "b1 ms (vs torch)", "b8x128 ms", "b32 natural ms"], rows))
    targets = {
        "fp32_vs_torch_b1": 2.0,
        "int8_vs_torch_b1": 4.0,
        "int8_vs_torch_b8": 2.0,
        "int8_min_cosine": 0.99,
    }
    met = {key: key in figures and figures[key] >= value for key, value in targets.items()}
    print(
        "targets: "
        + ", ".join(
            f"{k} {figures.get(k)} (>= {v}: {'met' if met[k] else 'NOT met'})" for k, v in targets.items()
        )
    )
    write_figures(
        "convert",
        {
            **figures,
            **{f"target_{k}": v for k, v in targets.items()},
            "meets_targets": all(met.values()),
            "rounds_b1": args.rounds,
            **machine(),
        },
    )


if __name__ == "__main__":
    main()
