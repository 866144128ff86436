"""INT8 levers for OpenVINO and onnxruntime, graph against graph, with the kernels each one ran.

sentence-transformers' static OpenVINO INT8 (NNCF's pipeline through optimum-intel: SmoothQuant, then
fast bias correction) ran at b8 x 128 in two thirds of the time of deploybench's dynamic INT8 on
onnxruntime (bench/results/peers.json). Every variant here starts from deploybench's own graphs (the
``convert.engine: openvino`` artifact's fp32 graph, pooling and normalisation inside, and the INT8
artifacts) and runs beside that peer, each compiled for one thread and fed the same tokenised batch:
graph time only, no tokenisation, every variant once per round, the order rotated.

* ``ort_dynamic_int8``: the INT8 artifact on onnxruntime (dynamic u8s8, outlier channels split);
* ``ov_dynamic_int8``: that same graph on OpenVINO (what ``engine: openvino, precision: int8`` built
  before it became static); ``ov_artifact_int8``: what it builds now (``ov_static_split``'s recipe);
* ``ov_static_*``: NNCF's ``quantize(model_type=TRANSFORMER)`` of the fp32 graph, calibrated on the
  convert step's own calibration texts (36, workflows.conversion.parity.calibration_items): as it comes
  (SmoothQuant, the rest of the graph in the plugin's bf16), with the rest in f32, without SmoothQuant,
  with the PERFORMANCE preset (symmetric activations), and calibrated on 300 texts as the peer was;
* ``ov_weights_int8_dyn``: int8 weights only (NNCF ``compress_weights`` INT8_SYM), activations quantized
  per group of 32 at run time by the CPU plugin (``DYNAMIC_QUANTIZATION_GROUP_SIZE``);
* ``ov_fp32_bf16``: the fp32 graph in OpenVINO's bf16; ``st_openvino_qint8``: the peer.

Accuracy: each variant's minimum cosine against the fp32 graph computed in f32, over the convert step's
64 validation texts (workflows.conversion.parity.validation_items, 1 to ~400 words, in batches of 8),
and on the b1 and b8 x 128 texts. Kernels: each OpenVINO variant is profiled once at b8 x 128
(``PERF_COUNT``), its time summed per implementation (``brgemm_avx512_amx``, ``jit_avx512_core_vnni``,
``ref``...) and per operation type.

    .venv/bin/python bench/openvino_static_int8.py texts .peers-work         # the convert step's texts
    .venv-peers/bin/python bench/openvino_static_int8.py measure .peers-work  # after `make bench-peers`

Runs in the peers' environment (nncf comes with optimum-intel there). Writes
bench/results/openvino_static_int8.json (flat).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
from peers_timing import cpu_flags, cpu_model, median_interval, rotated_samples  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "openvino_static_int8.json"
ROUNDS = {"b1_natural": 60, "b8_seq128": 16}
MAX_LENGTH = 128
ONE_THREAD = {"INFERENCE_NUM_THREADS": "1", "PERFORMANCE_HINT": "LATENCY"}
PEER = "st_openvino_qint8"


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
        return outputs / np.linalg.norm(outputs, axis=1, keepdims=True)
    weights = mask[..., None].astype(np.float32)
    vectors = (outputs * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def static_int8(
    core: Any, fp32: Path, items: list[dict[str, np.ndarray]], file: Path, **options: Any
) -> Path:
    """NNCF's static INT8 of the fp32 graph for OpenVINO (cached in ``file``)."""
    import nncf
    import openvino

    if not file.is_file():
        quantized = nncf.quantize(
            core.read_model(str(fp32)),
            nncf.Dataset(items),
            model_type=nncf.ModelType.TRANSFORMER,
            subset_size=len(items),
            **options,
        )
        openvino.save_model(quantized, str(file))
    return file


def static_int8_onnx(fp32: Path, items: list[dict[str, np.ndarray]], file: Path) -> Path:
    """NNCF's static INT8 of the fp32 ONNX graph by its ONNX backend: an ONNX graph with QDQ pairs,
    which OpenVINO reads as FakeQuantize and onnxruntime runs as QDQ (cached in ``file``)."""
    import nncf
    import onnx

    if not file.is_file():
        quantized = nncf.quantize(
            onnx.load(str(fp32)),
            nncf.Dataset(items),
            model_type=nncf.ModelType.TRANSFORMER,
            subset_size=len(items),
        )
        onnx.save(quantized, str(file))
    return file


def static_int8_split(fp32: Path, items: list[dict[str, np.ndarray]], file: Path) -> Path:
    """The convert step's outlier split (workflows.conversion.quantize.split_outliers: channels over 4x
    their tensor's median range, at most 8, go through small fp32 MatMuls), then NNCF's static INT8 of
    the rest by its ONNX backend, the split's nodes left unquantized (cached in ``file``)."""
    import nncf
    import onnx

    from workflows.conversion.quantize import channel_ranges, split_outliers

    if not file.is_file():
        model = onnx.load(str(fp32))
        keep, _ = split_outliers(model, channel_ranges(fp32, items))
        quantized = nncf.quantize(
            model,
            nncf.Dataset(items),
            model_type=nncf.ModelType.TRANSFORMER,
            subset_size=len(items),
            ignored_scope=nncf.IgnoredScope(names=keep),
        )
        onnx.save(quantized, str(file))
    return file


def weights_int8(core: Any, fp32: Path, file: Path) -> Path:
    """Int8 weights only (symmetric, per output channel), activations left to the plugin."""
    import nncf
    import openvino

    if not file.is_file():
        compressed = nncf.compress_weights(core.read_model(str(fp32)), mode=nncf.CompressWeightsMode.INT8_SYM)
        openvino.save_model(compressed, str(file))
    return file


def profile(compiled: Any, feed: dict[str, np.ndarray]) -> dict[str, Any]:
    """Milliseconds per implementation and per operation type, from one profiled call after a warm-up."""
    request = compiled.create_infer_request()
    request.infer(feed)
    request.infer(feed)
    by_kernel: Counter[str] = Counter()
    by_type: Counter[str] = Counter()
    for info in request.get_profiling_info():
        ms = info.real_time.total_seconds() * 1000
        by_kernel[info.exec_type] += ms
        by_type[info.node_type] += ms
    top = dict(by_kernel.most_common(6))
    return {
        "kernels": {k: round(v, 2) for k, v in top.items()},
        "types": {k: round(v, 2) for k, v in by_type.most_common(6)},
    }


def write_texts(workdir: Path) -> None:
    """The convert step's calibration and validation texts, for the peers' environment (no pydantic)."""
    from workflows.benchmark.texts import long_texts
    from workflows.conversion import parity

    chosen = {
        "calibration": [str(t) for t in parity.calibration_items("embedding")],
        "validation": [str(t) for t in parity.validation_items("embedding")],
        "long": long_texts(16, seed=98, words=MAX_LENGTH),
    }
    (workdir / "convert-texts.json").write_text(json.dumps(chosen), encoding="utf-8")


def build_variants(workdir: Path, core: Any, tokenizer: Any, names: list[str]) -> dict[str, Any]:
    """name -> (the graph file, its OpenVINO config, or None for onnxruntime)."""
    fp32 = workdir / "artifact-deploybench_openvino" / "model.onnx"
    dynamic = workdir / "artifact-deploybench_int8" / "model.int8.onnx"
    convert_texts = json.loads((workdir / "convert-texts.json").read_text(encoding="utf-8"))
    bundled = [feeds(tokenizer, [t], names) for t in convert_texts["calibration"]]
    long = [feeds(tokenizer, [t], names) for t in convert_texts["long"]]
    texts = json.loads((workdir / "texts.json").read_text(encoding="utf-8"))
    peer_texts = [feeds(tokenizer, [t], names) for t in texts["calibration"]]
    scratch = workdir / "int8-levers"
    scratch.mkdir(exist_ok=True)
    import nncf

    no_sq = nncf.AdvancedQuantizationParameters(smooth_quant_alpha=-1.0)
    static = static_int8(core, fp32, bundled, scratch / "static.xml")
    return {
        "ort_dynamic_int8": (dynamic, None),
        "ov_dynamic_int8": (dynamic, {}),
        "ov_artifact_int8": (workdir / "artifact-deploybench_openvino_int8" / "model.int8.onnx", {}),
        "ov_static": (static, {}),
        "ov_static_f32_rest": (static, {"INFERENCE_PRECISION_HINT": "f32"}),
        "ov_static_no_smoothquant": (
            static_int8(core, fp32, bundled, scratch / "static-nosq.xml", advanced_parameters=no_sq),
            {},
        ),
        "ov_static_performance": (
            static_int8(
                core, fp32, bundled, scratch / "static-perf.xml", preset=nncf.QuantizationPreset.PERFORMANCE
            ),
            {},
        ),
        "ov_static_300_texts": (static_int8(core, fp32, peer_texts, scratch / "static-300.xml"), {}),
        "ov_static_onnx_qdq": (static_int8_onnx(fp32, bundled, scratch / "static-qdq.onnx"), {}),
        "ort_static_onnx_qdq": (scratch / "static-qdq.onnx", None),
        "ov_static_split": (static_int8_split(fp32, bundled, scratch / "static-split.onnx"), {}),
        "ov_static_split_f32_rest": (scratch / "static-split.onnx", {"INFERENCE_PRECISION_HINT": "f32"}),
        "ov_static_long_calibration": (
            static_int8_onnx(fp32, bundled + long, scratch / "static-long.onnx"),
            {},
        ),
        "ov_weights_int8_dyn": (
            weights_int8(core, fp32, scratch / "weights.xml"),
            {"DYNAMIC_QUANTIZATION_GROUP_SIZE": "32"},
        ),
        "ov_fp32_bf16": (fp32, {}),
        PEER: (workdir / "model" / "openvino" / "openvino_model_qint8_quantized.xml", {}),
    }


def runner(core: Any, file: Path, config: dict[str, str] | None) -> tuple[Callable[..., Any], Any, list[str]]:
    """A call that runs one feed and returns the first output, the compiled model (or None) and its inputs."""
    if config is None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(str(file), options, providers=["CPUExecutionProvider"])
        return (lambda feed: session.run(None, feed)[0]), None, [i.name for i in session.get_inputs()]
    compiled = core.compile_model(str(file), "CPU", {**ONE_THREAD, **config})
    request = compiled.create_infer_request()
    return (lambda feed: request.infer(feed)[0]), compiled, [p.any_name for p in compiled.inputs]


def main() -> None:

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("texts", "measure"))
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--only", default="", help="variants to time, comma-separated (default: all)")
    arguments = parser.parse_args()
    workdir = arguments.workdir
    if arguments.step == "texts":
        write_texts(workdir)
        return
    import nncf
    import openvino
    from tokenizers import Tokenizer

    convert_texts = json.loads((workdir / "convert-texts.json").read_text(encoding="utf-8"))
    texts = json.loads((workdir / "texts.json").read_text(encoding="utf-8"))
    artifact = workdir / "artifact-deploybench_openvino"
    tokenizer = Tokenizer.from_file(str(artifact / "tokenizer" / "tokenizer.json"))
    core = openvino.Core()
    fp32 = artifact / "model.onnx"
    names = [port.any_name for port in core.read_model(str(fp32)).inputs]
    variants = build_variants(workdir, core, tokenizer, names)
    if arguments.only:
        keep = {"ov_fp32_bf16", PEER, *arguments.only.split(",")}
        variants = {k: v for k, v in variants.items() if k in keep}
    reference = core.compile_model(str(fp32), "CPU", {**ONE_THREAD, "INFERENCE_PRECISION_HINT": "f32"})
    reference_request = reference.create_infer_request()
    figures: dict[str, Any] = {
        "cpu_model": cpu_model(),
        "cpu_flags": ",".join(cpu_flags()),
        "openvino_version": openvino.get_version().split("-", 1)[0],
        "nncf_version": nncf.__version__,
        "threads": 1,
        "calibration_texts": len(convert_texts["calibration"]),
        "load_average_1m_before": round(os.getloadavg()[0], 2),
        "measures": "graph time only, same tokenised batch, order rotated each round",
    }
    runs, compiled = {}, {}
    for name, (file, config) in variants.items():
        run, model, inputs = runner(core, file, config)
        runs[name], compiled[name] = (run, inputs), model
    validation = convert_texts["validation"]
    checks = {
        "validation": [validation[i : i + 8] for i in range(0, len(validation), 8)],
        **{shape: [texts[shape]] for shape in ROUNDS},
    }
    for check, batches in checks.items():
        for name, (run, inputs) in runs.items():
            worst = 1.0
            for batch in batches:
                ours = feeds(tokenizer, batch, names)
                expected = reference_request.infer(ours)[0]
                vectors = pooled(np.asarray(run(feeds(tokenizer, batch, inputs))), ours["attention_mask"])
                worst = min(worst, float(np.min(np.sum(vectors * expected, axis=1))))
            figures[f"{check}_{name}_min_cosine"] = round(worst, 5)
    for shape, rounds in ROUNDS.items():
        batch = texts[shape]
        batch_feeds = {name: feeds(tokenizer, batch, inputs) for name, (_, inputs) in runs.items()}
        calls = {name: (lambda _, r=run, f=batch_feeds[name]: r(f)) for name, (run, _) in runs.items()}
        samples = rotated_samples(calls, batch, rounds)
        print(f"\n{shape}, one thread (graph only)\n")
        print("| variant | ms [95%] | peer / variant [95%] | min cosine to fp32: validation / this shape |")
        print("|---|---|---|---|")
        for name, values in samples.items():
            median, low, high = median_interval(values)
            ratio = median_interval([p / o for p, o in zip(samples[PEER], values, strict=True)])
            key = f"{shape}_{name}"
            figures.update({f"{key}_ms": round(median, 3), f"{key}_ms_low": round(low, 3)})
            figures.update({f"{key}_ms_high": round(high, 3), f"{key}_n": len(values)})
            figures[f"{key}_peer_over_variant"] = [round(x, 3) for x in ratio]
            print(
                f"| {name} | {median:.2f} [{low:.2f}, {high:.2f}] | {ratio[0]:.2f}x [{ratio[1]:.2f}, {ratio[2]:.2f}] | "
                f"{figures[f'validation_{name}_min_cosine']:.5f} / {figures[f'{key}_min_cosine']:.5f} |"
            )
    print("\nb8 x 128, one profiled call: ms per implementation")
    for name, model in compiled.items():
        if model is None:
            continue
        config = {**ONE_THREAD, **variants[name][1], "PERF_COUNT": "YES"}
        found = profile(
            core.compile_model(str(variants[name][0]), "CPU", config),
            feeds(tokenizer, texts["b8_seq128"], runs[name][1]),
        )
        for kind in ("kernels", "types"):
            figures[f"profile_b8_seq128_{name}_{kind}"] = json.dumps(found[kind])
        figures[f"t1_{name}_computes_in"] = model.get_property("INFERENCE_PRECISION_HINT").get_type_name()
        print(f"{name} ({figures[f't1_{name}_computes_in']}): {found['kernels']}; {found['types']}")
    figures["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    print(
        f"\nCPU {figures['cpu_model']}, flags {figures['cpu_flags']}; "
        f"load {figures['load_average_1m_before']} -> {figures['load_average_1m_after']}"
    )
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
