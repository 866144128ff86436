"""A lever for INT8 at b8 x 128: deploybench's fp32 graph quantized statically by NNCF for OpenVINO.

sentence-transformers' static OpenVINO INT8 (NNCF's pipeline through optimum-intel: SmoothQuant, then
fast bias correction) ran at b8 x 128 in half the time of deploybench's dynamic INT8 on onnxruntime
(bench/results/peers.json). This measures the same quantization applied to deploybench's own fp32
graph (the ``convert.engine: openvino`` artifact, pooling and normalisation inside), calibrated on the
same 300 local texts, against that peer's graph and against the fp32 graph in OpenVINO's bf16, each
compiled for one thread and fed the same tokenised batches: graph time only, no tokenisation, every
variant once per round, the order rotated. Accuracy is each graph's minimum cosine against the fp32
graph computed in f32, on the b1 and b8 x 128 texts.

    .venv-peers/bin/python bench/openvino_static_int8.py .peers-work   # after `make bench-peers`

Runs in the peers' environment (nncf comes with optimum-intel there). Writes
bench/results/openvino_static_int8.json (flat).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from peers_timing import cpu_flags, cpu_model, median_interval, rotated_samples  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "openvino_static_int8.json"
ROUNDS = {"b1_natural": 60, "b8_seq128": 16}
MAX_LENGTH = 128


def feeds(tokenizer: Any, texts: list[str], names: list[str]) -> dict[str, np.ndarray]:
    """One batch, padded to its longest text (as the serving code pads a bucket)."""
    tokenizer.enable_truncation(MAX_LENGTH)
    tokenizer.enable_padding()
    encodings = tokenizer.encode_batch(texts)
    arrays = {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
    }
    return {name: arrays[name] for name in names}


def pooled(outputs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean pooling and L2 normalisation of token embeddings (the peer's graph ends before them)."""
    if outputs.ndim == 2:
        return outputs
    weights = mask[..., None].astype(np.float32)
    vectors = (outputs * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def main() -> None:
    import nncf
    import openvino
    from tokenizers import Tokenizer

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workdir", type=Path)
    workdir = parser.parse_args().workdir
    texts = json.loads((workdir / "texts.json").read_text(encoding="utf-8"))
    artifact = workdir / "artifact-deploybench_openvino"
    tokenizer = Tokenizer.from_file(str(artifact / "tokenizer" / "tokenizer.json"))
    core = openvino.Core()
    ours = core.read_model(str(artifact / "model.onnx"))
    names = [port.any_name for port in ours.inputs]
    quantized_file = workdir / "deploybench-static-int8.xml"
    if not quantized_file.is_file():
        calibration = [feeds(tokenizer, [text], names) for text in texts["calibration"]]
        quantized = nncf.quantize(
            ours,
            nncf.Dataset(calibration),
            model_type=nncf.ModelType.TRANSFORMER,
            subset_size=len(calibration),
        )
        openvino.save_model(quantized, str(quantized_file))
    peer = workdir / "model" / "openvino" / "openvino_model_qint8_quantized.xml"
    one_thread = {"INFERENCE_NUM_THREADS": "1", "PERFORMANCE_HINT": "LATENCY"}
    compiled = {
        "deploybench_fp32_bf16": core.compile_model(ours, "CPU", one_thread),
        "deploybench_static_int8": core.compile_model(str(quantized_file), "CPU", one_thread),
        "st_openvino_qint8": core.compile_model(str(peer), "CPU", one_thread),
    }
    reference = core.compile_model(ours, "CPU", {**one_thread, "INFERENCE_PRECISION_HINT": "f32"})
    figures: dict[str, Any] = {
        "cpu_model": cpu_model(),
        "cpu_flags": ",".join(cpu_flags()),
        "openvino_version": openvino.get_version().split("-", 1)[0],
        "nncf_version": nncf.__version__,
        "threads": 1,
        "calibration_texts": len(texts["calibration"]),
        "load_average_1m_before": round(os.getloadavg()[0], 2),
        "measures": "graph time only, same tokenised batch, order rotated each round",
    }
    names_in_order = list(compiled)
    for shape, rounds in ROUNDS.items():
        batch = texts[shape]
        requests = {name: model.create_infer_request() for name, model in compiled.items()}
        peer_feed = feeds(tokenizer, batch, [p.any_name for p in compiled["st_openvino_qint8"].inputs])
        our_feed = feeds(tokenizer, batch, names)
        inputs = {name: peer_feed if name.startswith("st_") else our_feed for name in compiled}
        expected = reference.create_infer_request().infer(our_feed)[0]
        for name, request in requests.items():
            vectors = pooled(request.infer(inputs[name])[0], our_feed["attention_mask"])
            cosine = np.sum(vectors * expected, axis=1) / (
                np.linalg.norm(vectors, axis=1) * np.linalg.norm(expected, axis=1)
            )
            figures[f"{shape}_{name}_min_cosine"] = round(float(cosine.min()), 5)
        runs = {name: (lambda _, r=requests[name], f=inputs[name]: r.infer(f)) for name in names_in_order}
        samples = rotated_samples(runs, batch, rounds)
        for name, values in samples.items():
            median, low, high = median_interval(values)
            figures[f"{shape}_{name}_ms"] = round(median, 3)
            figures[f"{shape}_{name}_ms_low"] = round(low, 3)
            figures[f"{shape}_{name}_ms_high"] = round(high, 3)
            figures[f"{shape}_{name}_n"] = len(values)
        ratio = median_interval(
            [
                p / o
                for p, o in zip(samples["st_openvino_qint8"], samples["deploybench_static_int8"], strict=True)
            ]
        )
        figures[f"{shape}_peer_over_static_int8"] = [round(x, 3) for x in ratio]
        print(f"\n{shape}, one thread (graph only)\n")
        print("| variant | ms [95%] | min cosine to fp32 (f32) |")
        print("|---|---|---|")
        for name in names_in_order:
            print(
                f"| {name} | {figures[f'{shape}_{name}_ms']:.2f} [{figures[f'{shape}_{name}_ms_low']:.2f}, "
                f"{figures[f'{shape}_{name}_ms_high']:.2f}] | {figures[f'{shape}_{name}_min_cosine']:.5f} |"
            )
        print(f"peer static INT8 / deploybench static INT8: {ratio[0]:.2f}x [{ratio[1]:.2f}, {ratio[2]:.2f}]")
    figures["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    print(
        f"\nCPU {figures['cpu_model']}, flags {figures['cpu_flags']}; load {figures['load_average_1m_before']} -> {figures['load_average_1m_after']}"
    )
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
