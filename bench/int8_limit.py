"""How close the INT8 artifact comes to what this CPU's int8 GEMM allows.

1. The limit. onnxruntime's int8 GEMM (DynamicQuantizeMatMul, what the dynamic INT8 graph runs:
   activations quantized per call, int8 weights) against its fp32 MatMul, at MiniLM's weight
   shapes (QKV and output 384x384, FFN 384x1536 and 1536x384) and each shape's rows (b1 natural:
   about 16 tokens; b8 seq128: 1024). The fp32 artifact is profiled to find the share of its time
   in those weight GEMMs (g). With an int8:fp32 GEMM throughput ratio r, the whole graph can gain
   at most 1 / ((1 - g) + g / r) (the rest, attention, softmax, LayerNorm, GELU, stays as it is).
2. The INT8 artifact (ConvertToOnnx's, through the conversion cache) against the fp32 artifact
   and against torch, same inputs, same threads, in alternating blocks; its speed-up over fp32
   as a fraction of the limit.
3. Quantization choices tried on the same fp32 graph: per-channel or per-tensor weights, reduce
   range or not; each with its speed and its agreement (min cosine to fp32 over the validation
   texts).

Writes bench/results/int8_limit.json (flat), with the CPU flags and the load average.
Usage: python bench/int8_limit.py [--threads 1] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conversion_support import encode_shape, machine, write_figures  # noqa: E402

HIDDEN, FFN = 384, 1536
WEIGHT_SHAPES = (
    (HIDDEN, HIDDEN),
    (HIDDEN, HIDDEN),
    (HIDDEN, HIDDEN),
    (HIDDEN, HIDDEN),
    (HIDDEN, FFN),
    (FFN, HIDDEN),
)
WEIGHT_GEMMS = ("MatMul", "FusedMatMul", "Gemm", "DynamicQuantizeMatMul", "MatMulInteger")


def session(path_or_bytes: Any, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(path_or_bytes, options, providers=["CPUExecutionProvider"])


def gemm_graphs(k: int, n: int) -> tuple[bytes, bytes]:
    """One fp32 MatMul and one com.microsoft DynamicQuantizeMatMul with the same random weights."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weight = rng.standard_normal((k, n)).astype(np.float32) * 0.05
    scale = np.abs(weight).max(axis=0) / 127.0
    quantized = np.clip(np.round(weight / scale), -127, 127).astype(np.int8)
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, ["m", k])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", n])
    fp32 = helper.make_graph(
        [helper.make_node("MatMul", ["a", "w"], ["y"])],
        "fp32",
        [a],
        [y],
        [numpy_helper.from_array(weight, "w")],
    )
    int8 = helper.make_graph(
        [helper.make_node("DynamicQuantizeMatMul", ["a", "w", "s", "z"], ["y"], domain="com.microsoft")],
        "int8",
        [a],
        [y],
        [
            numpy_helper.from_array(quantized, "w"),
            numpy_helper.from_array(scale.astype(np.float32), "s"),
            numpy_helper.from_array(np.zeros(n, dtype=np.int8), "z"),
        ],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return (
        helper.make_model(fp32, opset_imports=opsets, ir_version=8).SerializeToString(),
        helper.make_model(int8, opset_imports=opsets, ir_version=8).SerializeToString(),
    )


def timed(run: Any, seconds: float) -> float:
    """Median ms of ``run()`` over about ``seconds``, after two warm calls."""
    run()
    run()
    out = []
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop or len(out) < 5:
        started = time.perf_counter()
        run()
        out.append((time.perf_counter() - started) * 1000)
    return statistics.median(out)


def gemm_ratio(rows: int, threads: int, rounds: int) -> tuple[float, float, float]:
    """(fp32 ms, int8 ms, ratio) over one encoder layer's weight GEMMs at ``rows`` rows, alternating."""
    fp32_ms, int8_ms = 0.0, 0.0
    for k, n in WEIGHT_SHAPES:
        graphs = gemm_graphs(k, n)
        sessions = [session(g, threads) for g in graphs]
        a = np.random.default_rng(1).standard_normal((rows, k)).astype(np.float32)
        f, i = [], []
        for _ in range(rounds):
            f.append(timed(lambda s=sessions[0], a=a: s.run(None, {"a": a}), 0.2))
            i.append(timed(lambda s=sessions[1], a=a: s.run(None, {"a": a}), 0.2))
        fp32_ms += statistics.median(f)
        int8_ms += statistics.median(i)
    return fp32_ms, int8_ms, fp32_ms / int8_ms


def gemm_share(model: Path, feeds: dict[str, np.ndarray], threads: int) -> float:
    batch, length = feeds["input_ids"].shape
    qkv = 3 * batch * length * HIDDEN * HIDDEN
    scores = 2 * batch * length * length * HIDDEN
    qkv_fraction = qkv / (qkv + scores)
    """Share of the graph's node time spent in weight GEMMs (onnxruntime's own profile)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.enable_profiling = True
    options.profile_file_prefix = str(Path(tempfile.mkdtemp()) / "profile")
    s = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    for _ in range(20):
        s.run(None, feeds)
    events = json.loads(Path(s.end_profiling()).read_text())
    nodes = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    total = sum(e["dur"] for e in nodes)
    gemm = sum(_weight_gemm_time(e, qkv_fraction) for e in nodes)
    return gemm / total if total else 0.0


def _weight_gemm_time(event: dict[str, Any], qkv_fraction: float) -> float:
    """Microseconds of a node spent in GEMMs against weights (what INT8 quantizes). onnxruntime lists
    only non-constant inputs: a MatMul with one listed input multiplies by a weight. A fused Attention
    node holds the QKV projection and the (unquantized) score products: its QKV share by FLOPs."""
    args = event["args"]
    if args.get("op_name") in WEIGHT_GEMMS and len(args.get("input_type_shape", [])) == 1:
        return float(event["dur"])
    if args.get("op_name") == "Attention":
        return float(event["dur"]) * qkv_fraction
    return 0.0


def feeds_for(tokenizer: Any, shape: str, model: Any) -> dict[str, np.ndarray]:
    names = {i.name for i in model.get_inputs()}
    return {k: v.astype(np.int64) for k, v in encode_shape(tokenizer, shape).items() if k in names}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from served_vs_default import convert
    from transformers import AutoModel, AutoTokenizer

    from workflows.conversion.source import bundled_model_path

    torch.set_num_threads(args.threads)
    figures: dict[str, Any] = {**machine(), "threads": args.threads, "model": "all-MiniLM-L6-v2 (bundled)"}
    figures["load_average_1m_before"] = figures.pop("load_average_1m")
    workdir = Path(tempfile.mkdtemp(prefix="int8-limit-"))
    source = bundled_model_path()
    artifacts = {p: convert("minilm", source, p, workdir) for p in ("fp32", "int8")}
    tokenizer = AutoTokenizer.from_pretrained(str(source))
    sessions = {
        p: session(str(folder / ("model.onnx" if p == "fp32" else "model.int8.onnx")), args.threads)
        for p, folder in artifacts.items()
    }
    torch_model = AutoModel.from_pretrained(str(source)).eval()
    rows_of = {"b1_natural": None, "b8_seq128": 1024}
    for shape in ("b1_natural", "b8_seq128"):
        feeds = feeds_for(tokenizer, shape, sessions["fp32"])
        rows = rows_of[shape] or int(feeds["input_ids"].size)
        fp32_gemm, int8_gemm, ratio = gemm_ratio(rows, args.threads, args.rounds)
        share = gemm_share(artifacts["fp32"] / "model.onnx", feeds, args.threads)
        limit = 1 / ((1 - share) + share / ratio)
        tensors = {k: torch.from_numpy(v) for k, v in feeds.items()}
        ms: dict[str, list[float]] = {"fp32": [], "int8": [], "torch": []}
        with torch.inference_mode():
            for _ in range(args.rounds):
                for p in ("fp32", "int8"):
                    ms[p].append(timed(lambda s=sessions[p], f=feeds: s.run(None, f), 0.5))
                ms["torch"].append(timed(lambda t=tensors: torch_model(**t), 0.5))
        median = {k: statistics.median(v) for k, v in ms.items()}
        speedup = median["fp32"] / median["int8"]
        figures.update(
            {
                f"{shape}_rows": rows,
                f"{shape}_gemm_fp32_ms": round(fp32_gemm, 4),
                f"{shape}_gemm_int8_ms": round(int8_gemm, 4),
                f"{shape}_gemm_int8_to_fp32_ratio": round(ratio, 3),
                f"{shape}_gemm_share_of_fp32_graph": round(share, 3),
                f"{shape}_limit_int8_over_fp32": round(limit, 3),
                f"{shape}_fp32_ms": round(median["fp32"], 3),
                f"{shape}_int8_ms": round(median["int8"], 3),
                f"{shape}_torch_ms": round(median["torch"], 3),
                f"{shape}_int8_over_fp32": round(speedup, 3),
                f"{shape}_fraction_of_limit": round(speedup / limit, 3),
                f"{shape}_int8_vs_torch": round(median["torch"] / median["int8"], 3),
                f"{shape}_fp32_vs_torch": round(median["torch"] / median["fp32"], 3),
            }
        )
    write_figures("int8_limit", figures)  # the limit and the artifact's figures, before the variants
    figures.update(variants(artifacts["fp32"], tokenizer, args.threads, args.rounds, workdir))
    figures["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    print(
        f"{'shape':<11} {'GEMM int8:fp32':>14} {'GEMM share':>10} {'limit':>6} {'int8/fp32':>9} {'of limit':>8} {'int8 vs torch':>13} {'fp32 vs torch':>13}"
    )
    for shape in ("b1_natural", "b8_seq128"):
        print(
            f"{shape:<11} {figures[f'{shape}_gemm_int8_to_fp32_ratio']:>14.2f} {figures[f'{shape}_gemm_share_of_fp32_graph']:>10.2f} "
            f"{figures[f'{shape}_limit_int8_over_fp32']:>6.2f} {figures[f'{shape}_int8_over_fp32']:>9.2f} "
            f"{figures[f'{shape}_fraction_of_limit']:>8.2f} {figures[f'{shape}_int8_vs_torch']:>13.2f} {figures[f'{shape}_fp32_vs_torch']:>13.2f}"
        )
    for key in sorted(k for k in figures if k.startswith("variant_")):
        print(f"{key:<48} {figures[key]}")
    print(
        f"cpu flags: {figures['cpu_flags']}; load average (1 min) {figures['load_average_1m_before']} -> {figures['load_average_1m_after']}"
    )
    write_figures("int8_limit", figures)


def variants(fp32: Path, tokenizer: Any, threads: int, rounds: int, workdir: Path) -> dict[str, Any]:
    """Dynamic quantization choices on the fp32 graph: speed at b8 seq128 and min cosine to fp32."""
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from workflows.benchmark.texts import validation_texts

    base = session(str(fp32 / "model.onnx"), threads)
    texts = validation_texts(32)
    encoded = tokenizer(texts, padding=True, truncation=True, max_length=128, return_tensors="np")
    names = {i.name for i in base.get_inputs()}
    check = {k: v.astype(np.int64) for k, v in encoded.items() if k in names}
    reference = base.run(None, check)[0]
    feeds = feeds_for(tokenizer, "b8_seq128", base)
    out: dict[str, Any] = {}
    for per_channel in (True, False):
        for reduce_range in (False, True):
            name = f"{'per_channel' if per_channel else 'per_tensor'}_{'reduce_range' if reduce_range else 'full_range'}"
            target = workdir / f"{name}.onnx"
            quantize_dynamic(
                str(fp32 / "model.onnx"),
                str(target),
                weight_type=QuantType.QInt8,
                per_channel=per_channel,
                reduce_range=reduce_range,
                # The fp32 graph may carry com.microsoft fused nodes, whose outputs shape inference cannot type.
                extra_options={"DefaultTensorType": TensorProto.FLOAT},
            )
            candidate = session(str(target), threads)
            answer = candidate.run(None, check)[0]
            cosine = np.sum(reference * answer, axis=-1) / (
                np.linalg.norm(reference, axis=-1) * np.linalg.norm(answer, axis=-1)
            )
            out[f"variant_{name}_min_cosine"] = round(float(np.min(cosine)), 5)
            out[f"variant_{name}_b8_seq128_ms"] = round(
                statistics.median(timed(lambda s=candidate: s.run(None, feeds), 0.5) for _ in range(rounds)),
                3,
            )
    return out


if __name__ == "__main__":
    main()
