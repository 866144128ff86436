"""Partial (mixed) INT8 on OpenVINO: some of MiniLM's weight MatMuls in INT8, the rest in the plugin's bf16.

Static INT8 of every weight MatMul on OpenVINO is about 1.6x the bf16 graph at b8 x 128, but its minimum
cosine to fp32 stays under 0.999 (bench/results/openvino_static_int8.json): a few activation channels of
the residual stream (MiniLM's channel 99) feed the QKV and FFN-input MatMuls through LayerNorm, and a
fixed activation scale has to cover them. The FFN's output projection is fed by GELU's 1536 channels, the
attention output projection by the attention's context. Each variant here quantizes a subset of the six
layers' MatMuls, everything else left out by an ``IgnoredScope``, and the rest runs in OpenVINO's bf16 on a
bf16 CPU. ``static_*``: NNCF's ``quantize(model_type=TRANSFORMER)`` (SmoothQuant, fast bias correction),
calibrated on the convert step's 36 calibration texts, one scale per activation tensor:

* ``static_ffn_out``: the FFN's output projection (1536 -> 384), a third of the weight multiply-adds;
  ``_nosq`` without SmoothQuant; ``_minmax`` with activation ranges from the calibration's extremes
  instead of NNCF's mean of per-text extremes; ``_qdq`` by NNCF's ONNX backend (an ONNX graph with QDQ
  pairs, as the convert step writes its INT8 graphs), on OpenVINO; ``_layerN`` (``--layers``, accuracy
  only) that layer's projection alone;
* ``static_ffn_out_attn_out``: FFN output and attention output projections;
* ``static_ffn``: FFN input and output projections (two thirds of the multiply-adds; the input sees the
  residual stream's outlier channels, which SmoothQuant migrates into the weights);
* ``static_ffn_attn_out``: both FFN projections and the attention output projection;
* ``dynamic_{ffn_out,ffn,all}_g{32,128}``: no calibration; the MatMuls' weights in INT8 (NNCF
  ``compress_weights`` INT8_ASYM, per output channel) and the CPU plugin quantizing their activations at
  run time, per group of 32 or 128 input channels of each token (``DYNAMIC_QUANTIZATION_GROUP_SIZE``);
  ``dynamic_ffn_out_g128_onnx``: the same weights written by NNCF's ONNX backend (an ONNX graph);

beside ``ov_fp32_bf16`` (the fp32 graph on OpenVINO: what ``precision: auto`` picks on a bf16 CPU) and
``st_openvino`` (sentence-transformers' OpenVINO IR as it comes, bf16 on this CPU; its graph ends before
pooling, which is done in numpy here, outside the timing).

Accuracy: each variant's minimum cosine against the fp32 graph computed in f32, over the convert step's
64 validation texts (in batches of 8), the b1 natural text and the b8 x 128 texts of bench/peers.py, and
(held out from every choice made here) bench/peers.py's 300 natural texts.
Timing: graph calls only, one thread, the same tokenised batch, every variant once a round in a rotated
order; ratios are medians of per-round ratios (other / variant, > 1: the variant is faster) with 95%
intervals. Runs in the peers' environment, after ``bench/openvino_static_int8.py texts DIR``:

    .venv-peers/bin/python bench/openvino_mixed_int8.py .peers-work [--rounds-b1 100 --rounds-b8 24] [--layers]

Writes bench/results/openvino_mixed_int8.json (flat).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
from openvino_static_int8 import ONE_THREAD, feeds, pooled, profile, runner  # noqa: E402
from peers_timing import cpu_flags, cpu_model, median_interval, rotated_samples  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "openvino_mixed_int8.json"
PEER = "st_openvino"
PICK = "ov_fp32_bf16"
# MatMul roles: a regular expression for each role's node in every layer (/model/encoder/layer.N/...).
ROLES = {
    "ffn_out": r"layer\.\d+/output/dense/MatMul",
    "ffn_in": r"layer\.\d+/intermediate/dense/MatMul",
    "attn_out": r"layer\.\d+/attention/output/dense/MatMul",
    **{f"ffn_out_{n}": rf"layer\.{n}/output/dense/MatMul" for n in range(6)},
}


def only(roles: list[str]) -> Any:
    """An IgnoredScope that leaves out every node but the MatMuls of ``roles`` (in every layer)."""
    import nncf

    wanted = "|".join(ROLES[r] for r in roles)
    return nncf.IgnoredScope(patterns=[rf"^(?!.*({wanted})$).*$"], validate=False)


def mixed(
    fp32: Path, items: list[dict[str, np.ndarray]], roles: list[str], file: Path, backend: str, **options: Any
) -> Path:
    """NNCF's static INT8 of only ``roles``' MatMuls, by the OpenVINO or the ONNX backend (cached)."""
    import nncf
    import onnx
    import openvino

    if file.is_file():
        return file
    model = onnx.load(str(fp32)) if backend == "onnx" else openvino.Core().read_model(str(fp32))
    quantized = nncf.quantize(
        model,
        nncf.Dataset(items),
        model_type=nncf.ModelType.TRANSFORMER,
        subset_size=len(items),
        ignored_scope=only(roles),
        **options,
    )
    if backend == "onnx":
        onnx.save(quantized, str(file))
    else:
        openvino.save_model(quantized, str(file))
    return file


def weights_only(core: Any, fp32: Path, roles: list[str], file: Path) -> Path:
    """INT8 weights (asymmetric, per output channel) for ``roles``' MatMuls only (all when empty), cached;
    by NNCF's ONNX backend (DequantizeLinear on each weight, the graph stays ONNX) when ``file`` ends in
    .onnx. With the pattern ``only`` builds, ``compress_weights`` compressed nothing (the outputs stayed
    exactly the fp32 graph's), so the other MatMuls are named instead. It compresses the embedding tables
    (Gathers) as well."""
    import nncf
    import onnx
    import openvino

    if file.is_file():
        return file
    as_onnx = file.suffix == ".onnx"
    model = onnx.load(str(fp32)) if as_onnx else core.read_model(str(fp32))
    matmuls = (
        [n.name for n in model.graph.node if n.op_type == "MatMul"]
        if as_onnx
        else [op.get_friendly_name() for op in model.get_ops() if op.get_type_name() == "MatMul"]
    )
    wanted = re.compile("|".join(ROLES[r] for r in roles) + "$") if roles else None
    scope = (
        nncf.IgnoredScope(names=[n for n in matmuls if not wanted.search(n)], validate=False)
        if wanted
        else None
    )
    compressed = nncf.compress_weights(model, mode=nncf.CompressWeightsMode.INT8_ASYM, ignored_scope=scope)
    if as_onnx:
        onnx.save(compressed, str(file))
    else:
        openvino.save_model(compressed, str(file))
    return file


def int8_matmuls(core: Any, file: Path) -> int:
    """How many MatMul inputs run quantized: the FakeQuantize ops OpenVINO reads from ``file`` (NNCF's
    own, or the ONNX graph's QuantizeLinear/DequantizeLinear pairs on activations; int8 weights are
    constants with their scales, not FakeQuantize)."""
    return sum(op.get_type_name() == "FakeQuantize" for op in core.read_model(str(file)).get_ops())


def compressed_weights(core: Any, file: Path) -> int:
    """How many weight matrices ``file`` holds in 8 bits (2-D u8/i8 constants, their [1, n] zero points left
    out); ``compress_weights`` counts the three embedding tables among them."""
    return sum(
        op.get_type_name() == "Constant"
        and op.get_output_element_type(0).get_type_name() in ("u8", "i8")
        and len(op.get_output_shape(0)) == 2
        and min(op.get_output_shape(0)) > 1
        for op in core.read_model(str(file)).get_ops()
    )


def gelu_ranges(workdir: Path, tokenizer: Any, names: list[str]) -> dict[str, float]:
    """Each layer's GELU output (the FFN output projection's input) over the calibration texts: its largest
    channel range and its median channel range (the convert step's ``channel_ranges``)."""
    from workflows.conversion.quantize import channel_ranges

    texts = json.loads((workdir / "convert-texts.json").read_text(encoding="utf-8"))
    items = [feeds(tokenizer, [t], names) for t in texts["calibration"]]
    ranges = channel_ranges(workdir / "artifact-deploybench_openvino" / "model.onnx", items)
    found: dict[str, float] = {}
    for tensor, values in ranges.items():
        layer = re.search(r"layer\.(\d+)/intermediate/intermediate_act_fn", tensor)
        if layer:
            found[f"gelu_layer{layer.group(1)}_max_channel_range"] = round(float(values.max()), 2)
            found[f"gelu_layer{layer.group(1)}_median_channel_range"] = round(float(np.median(values)), 2)
    return found


def build_variants(
    workdir: Path, core: Any, tokenizer: Any, names: list[str], layers: bool
) -> dict[str, tuple[Path, dict[str, str]]]:
    """name -> (the graph file, its OpenVINO config beyond one thread)."""
    import nncf
    from nncf.quantization.range_estimator import RangeEstimatorParametersSet

    fp32 = workdir / "artifact-deploybench_openvino" / "model.onnx"
    texts = json.loads((workdir / "convert-texts.json").read_text(encoding="utf-8"))
    items = [feeds(tokenizer, [t], names) for t in texts["calibration"]]
    scratch = workdir / "mixed-int8"
    scratch.mkdir(exist_ok=True)
    no_sq = nncf.AdvancedQuantizationParameters(smooth_quant_alpha=-1.0)
    minmax = nncf.AdvancedQuantizationParameters(
        activations_range_estimator_params=RangeEstimatorParametersSet.MINMAX
    )
    plans: dict[str, tuple[list[str], str, dict[str, Any]]] = {
        "static_ffn_out": (["ffn_out"], "openvino", {}),
        "static_ffn_out_nosq": (["ffn_out"], "openvino", {"advanced_parameters": no_sq}),
        "static_ffn_out_minmax": (["ffn_out"], "openvino", {"advanced_parameters": minmax}),
        "static_ffn_out_qdq": (["ffn_out"], "onnx", {}),
        "static_ffn_out_attn_out": (["ffn_out", "attn_out"], "openvino", {}),
        "static_ffn": (["ffn_out", "ffn_in"], "openvino", {}),
        "static_ffn_attn_out": (["ffn_out", "ffn_in", "attn_out"], "openvino", {}),
    }
    if layers:
        plans.update({f"static_ffn_out_layer{n}": ([f"ffn_out_{n}"], "openvino", {}) for n in range(6)})
    variants: dict[str, tuple[Path, dict[str, str]]] = {}
    for name, (roles, backend, options) in plans.items():
        file = scratch / (name + (".onnx" if backend == "onnx" else ".xml"))
        variants[name] = (mixed(fp32, items, roles, file, backend, **options), {})
    for label, roles in (("ffn_out", ["ffn_out"]), ("ffn", ["ffn_out", "ffn_in"]), ("all", [])):
        file = weights_only(core, fp32, roles, scratch / f"weights-{label}.xml")
        for group in (32, 128):
            variants[f"dynamic_{label}_g{group}"] = (file, {"DYNAMIC_QUANTIZATION_GROUP_SIZE": str(group)})
    onnx_file = weights_only(core, fp32, ["ffn_out"], scratch / "weights-ffn_out.onnx")
    variants["dynamic_ffn_out_g128_onnx"] = (onnx_file, {"DYNAMIC_QUANTIZATION_GROUP_SIZE": "128"})
    variants[PICK] = (fp32, {})
    variants[PEER] = (workdir / "model" / "openvino" / "openvino_model.xml", {})
    return variants


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--rounds-b1", type=int, default=100)
    parser.add_argument("--rounds-b8", type=int, default=24)
    parser.add_argument("--layers", action="store_true", help="also each layer's FFN output alone (accuracy)")
    parser.add_argument("--only", default="", help="variants to time, comma-separated (default: all)")
    arguments = parser.parse_args()
    workdir = arguments.workdir
    rounds = {"b1_natural": arguments.rounds_b1, "b8_seq128": arguments.rounds_b8}
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
    variants = build_variants(workdir, core, tokenizer, names, arguments.layers)
    if arguments.only:
        keep = {PICK, PEER, *arguments.only.split(",")}
        variants = {k: v for k, v in variants.items() if k in keep}
    reference = core.compile_model(str(fp32), "CPU", {**ONE_THREAD, "INFERENCE_PRECISION_HINT": "f32"})
    reference_request = reference.create_infer_request()
    figures: dict[str, Any] = {
        "model": "all-MiniLM-L6-v2",
        "cpu_model": cpu_model(),
        "cpu_flags": ",".join(cpu_flags()),
        "openvino_version": openvino.get_version().split("-", 1)[0],
        "nncf_version": nncf.__version__,
        "threads": 1,
        "calibration_texts": len(convert_texts["calibration"]),
        "load_average_1m_before": round(os.getloadavg()[0], 2),
        "measures": "graph time only, same tokenised batch, order rotated each round",
        "interval": "median, 95% order-statistic interval",
    }
    figures.update(gelu_ranges(workdir, tokenizer, names))
    runs, compiled = {}, {}
    for name, (file, config) in variants.items():
        run, model, inputs = runner(core, file, config)
        runs[name], compiled[name] = (run, inputs), model
        figures[f"{name}_computes_in"] = model.get_property("INFERENCE_PRECISION_HINT").get_type_name()
        figures[f"{name}_quantized_inputs"] = int8_matmuls(core, file)
        figures[f"{name}_int8_weights"] = compressed_weights(core, file)
    validation = convert_texts["validation"]
    natural = texts["calibration"]  # bench/peers.py's 300 natural texts, which nothing here calibrates on
    checks = {
        "validation": [validation[i : i + 8] for i in range(0, len(validation), 8)],
        **{shape: [texts[shape]] for shape in rounds},
        "natural_300": [natural[i : i + 8] for i in range(0, len(natural), 8)],
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
    # Each layer's variant alone is there for its accuracy; the timing is for the whole-model variants.
    timed = [name for name in runs if "_layer" not in name]
    for shape, count in rounds.items():
        batch = texts[shape]
        batch_feeds = {name: feeds(tokenizer, batch, runs[name][1]) for name in timed}
        calls = {
            name: (lambda _, r=run, f=batch_feeds[name]: r(f))
            for name, (run, _) in runs.items()
            if name in timed
        }
        for call in calls.values():
            call(batch)
        samples = rotated_samples(calls, batch, count)
        print(f"\n{shape}, one thread (graph only), n = {count}\n")
        print(
            "| variant | quantized inputs / int8 weights | ms [95%] | ST OV default / variant | auto's pick / variant | min cosine: validation / b1 / b8x128 / 300 natural |"
        )
        print("|---|---|---|---|---|---|")
        for name, values in samples.items():
            median, low, high = median_interval(values)
            key = f"{shape}_{name}"
            figures.update({f"{key}_ms": round(median, 3), f"{key}_ms_low": round(low, 3)})
            figures.update({f"{key}_ms_high": round(high, 3), f"{key}_n": len(values)})
            cells = []
            for other, label in ((PEER, "peer"), (PICK, "pick")):
                ratio = median_interval([o / v for o, v in zip(samples[other], values, strict=True)])
                figures.update(
                    {
                        f"{key}_{label}_over_variant{s}": round(x, 3)
                        for s, x in zip(("", "_low", "_high"), ratio, strict=True)
                    }
                )
                cells.append(f"{ratio[0]:.3f}x [{ratio[1]:.3f}, {ratio[2]:.3f}]")
            cosines = " / ".join(f"{figures[f'{c}_{name}_min_cosine']:.5f}" for c in checks)
            print(
                f"| {name} | {figures[f'{name}_quantized_inputs']}/{figures[f'{name}_int8_weights']} | {median:.2f} [{low:.2f}, {high:.2f}] | {cells[0]} | {cells[1]} | {cosines} |"
            )
        figures[f"{shape}_load_average_1m_after"] = round(os.getloadavg()[0], 2)
    print("\nb8 x 128, one profiled call: ms per implementation")
    for name in timed:
        config = {**ONE_THREAD, **variants[name][1], "PERF_COUNT": "YES"}
        found = profile(
            core.compile_model(str(variants[name][0]), "CPU", config),
            feeds(tokenizer, texts["b8_seq128"], runs[name][1]),
        )
        figures[f"profile_b8_seq128_{name}_kernels"] = json.dumps(found["kernels"])
        print(f"{name} ({figures[f'{name}_computes_in']}): {found['kernels']}")
    figures["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    print(
        f"\nCPU {figures['cpu_model']}, flags {figures['cpu_flags']}; "
        f"load {figures['load_average_1m_before']} -> {figures['load_average_1m_after']}"
    )
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
