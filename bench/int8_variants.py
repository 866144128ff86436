"""The INT8 quantization choices not covered by bench/int8_limit.py, measured side by side.

Every variant starts from the plain fp32 export (what the convert step quantizes) and is judged
against fp32 on the validation set (workflows.conversion.parity.validation_items):

* dynamic (``quantize_dynamic``, what ships): outlier channels split into fp32 (the shipped
  factor 4 / at most 8 channels), not split, or split with another factor/limit; first and last
  encoder layer left in fp32; attention's activation MatMuls (Q.K^T, P.V) quantized too, as
  sentence-transformers' qint8 export does;
* static QDQ (``quantize_static``, QuantFormat.QDQ, uint8 activations, per-channel int8 weights),
  calibrated on the convert step's calibration texts (parity.calibration_items): MinMax,
  Percentile or Entropy ranges; every MatMul or only the weight MatMuls (attention score
  products left fp32); on the outlier-split graph; int8 activations with
  ``session.qdqisint8allowed``;
* session options on the shipped graph: ``session.x64quantprecision`` (U8U8 kernels, documented
  for x64 without VNNI) and graph optimization level.

MiniLM (bundled): ms at b1 natural and b8 seq128 (one intra-op thread, all variants interleaved
in each round), speed-up over the fp32 artifact, min cosine to fp32. A random DeBERTa-v2
classifier (H384, 6 layers, head_std 0.3: small logit margins, where dynamic INT8 loses labels):
argmax agreement with fp32 and whether the collapse guard (ConvertSpec defaults) passes it.

Writes bench/results/int8_variants.json (flat), with the CPU flags, the load average and the
onnxruntime version. Usage: python bench/int8_variants.py [--rounds 9]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conversion_support import (  # noqa: E402
    convert,
    encode_shape,
    interleaved,
    machine,
    single_thread,
    table,
    write_figures,
)

B1_CALLS = 10
"""b1 calls per timed block: one b1 call is a few ms, too short to time alone on a shared host."""

SESSION_ATTRIBUTES = ("enable_mem_pattern", "enable_cpu_mem_arena")
"""Session options set as ``SessionOptions`` attributes ("0"/"1") rather than config entries."""

Built = tuple[Path, dict[str, str], str]
"""A variant's graph, its session config entries, and its graph optimization level."""


def session(path: Path, config: dict[str, str] | None = None, level: str = "all") -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = {
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    }[level]
    for key, value in (config or {}).items():
        if key in SESSION_ATTRIBUTES:  # SessionOptions attributes, not config entries
            setattr(options, key, value == "1")
        else:
            options.add_session_config_entry(key, value)
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def run_all(s: Any, batches: list[dict[str, np.ndarray]]) -> np.ndarray:
    names = {i.name for i in s.get_inputs()}
    return np.concatenate([s.run(None, {k: v for k, v in b.items() if k in names})[0] for b in batches])


class Reader:
    """onnxruntime's CalibrationDataReader: the calibration texts one at a time, zero-padded to one
    length (the histogram calibrators stack every call's tensors, so every call has one shape)."""

    def __init__(self, batches: list[dict[str, np.ndarray]], names: set[str]) -> None:
        length = max(b["input_ids"].shape[1] for b in batches)
        rows = [
            {k: np.pad(v[i : i + 1], ((0, 0), (0, length - v.shape[1]))) for k, v in b.items() if k in names}
            for b in batches
            for i in range(b["input_ids"].shape[0])
        ]
        self.items = iter(rows)

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.items, None)


def weight_matmul_names(plain: Path) -> tuple[str, ...]:
    import onnx

    from workflows.conversion.quantize import weight_matmuls

    return tuple(n.name for group in weight_matmuls(onnx.load(str(plain))).values() for n in group)


def layer_nodes(plain: Path, which: Callable[[int, int], bool]) -> tuple[str, ...]:
    """Names of the weight MatMuls in the encoder layers picked by ``which(index, count)``."""
    nodes = weight_matmul_names(plain)

    def index(name: str) -> int | None:
        marker = name.find("layer.")
        return int(name[marker + 6 :].split("/")[0]) if marker >= 0 else None

    layers = {i for i in (index(n) for n in nodes) if i is not None}
    return tuple(n for n in nodes if (i := index(n)) is not None and which(i, len(layers)))


def static_qdq(
    plain: Path,
    target: Path,
    batches: list[dict[str, np.ndarray]],
    *,
    method: str,
    weights_only: bool,
    split: bool = False,
    int8_activations: bool = False,
) -> Path:
    import onnx
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    from workflows.conversion.quantize import channel_ranges, split_outliers, strip_initializer_value_info

    model = onnx.load(str(plain))
    keep: list[str] = []
    if split:
        keep, _ = split_outliers(model, channel_ranges(plain, batches))
    strip_initializer_value_info(model)
    prepared = target.with_suffix(".prepared.onnx")
    onnx.save(model, str(prepared))
    names = {i.name for i in model.graph.input}
    extra: dict[str, Any] = {"MatMulConstBOnly": weights_only, "DefaultTensorType": onnx.TensorProto.FLOAT}
    if method == "Percentile":
        extra["CalibPercentile"] = 99.999
    quantize_static(
        str(prepared),
        str(target),
        Reader(batches, names),
        quant_format=QuantFormat.QDQ,
        op_types_to_quantize=["MatMul"],
        per_channel=True,
        activation_type=QuantType.QInt8 if int8_activations else QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        nodes_to_exclude=keep,
        calibrate_method=getattr(CalibrationMethod, method),
        extra_options=extra,
    )
    prepared.unlink()
    return target


def variants(
    plain: Path, work: Path, batches: list[dict[str, np.ndarray]], fused: Path | None = None
) -> dict[str, Callable[[], Built]]:
    """Name -> builder of one variant of ``plain`` (built lazily, in ``work``); ``fused`` (the fp32
    artifact's graph, after onnxruntime's transformer fusions) is quantized by the ``fused_`` ones."""
    from workflows.conversion.quantize import quantize_graph, save_calibration

    work.mkdir(parents=True, exist_ok=True)
    npz = str(save_calibration(batches, work / "calibration.npz"))

    def dynamic(name: str, source: Path | None = None, **options: Any) -> Callable[[], Built]:
        def build() -> Built:
            target = work / f"{name}.onnx"
            quantize_graph(str(source or plain), str(target), npz, **options)
            return target, {}, "all"

        return build

    def static(name: str, **options: Any) -> Callable[[], Built]:
        def build() -> Built:
            target = static_qdq(plain, work / f"{name}.onnx", batches, **options)
            config = {"session.qdqisint8allowed": "1"} if options.get("int8_activations") else {}
            return target, config, "all"

        return build

    def shipped_with(config: dict[str, str], level: str) -> Callable[[], Built]:
        return lambda: (work / "dynamic_shipped.onnx", config, level)

    edges = layer_nodes(plain, lambda i, count: i in (0, count - 1))
    every = layer_nodes(plain, lambda i, count: True)
    ffn = tuple(n for n in every if "intermediate/" in n or ("/output/" in n and "attention/" not in n))
    head = tuple(n for n in weight_matmul_names(plain) if n not in every)
    return {
        "dynamic_shipped": dynamic("dynamic_shipped"),
        "dynamic_no_split": dynamic("dynamic_no_split", split=False),
        "dynamic_split_bias_unfused": dynamic("dynamic_split_bias_unfused", fuse_bias=False),
        "dynamic_split_f3_l16": dynamic("dynamic_split_f3_l16", factor=3.0, limit=16),
        "dynamic_split_f8_l4": dynamic("dynamic_split_f8_l4", factor=8.0, limit=4),
        **{
            f"dynamic_smooth_a{round(alpha * 100):02d}": dynamic(
                f"dynamic_smooth_a{round(alpha * 100):02d}", smooth=alpha, split=False
            )
            for alpha in (0.5, 0.6, 0.65, 0.7, 0.75, 0.8)
        },
        "dynamic_smooth_every_a65": dynamic(
            "dynamic_smooth_every_a65", smooth=0.65, smooth_every=True, split=False
        ),
        "dynamic_smooth_a50_split": dynamic("dynamic_smooth_a50_split", smooth=0.5),
        "dynamic_smooth_a65_split": dynamic("dynamic_smooth_a65_split", smooth=0.65),
        "dynamic_smooth_a65_split_f8_l4": dynamic(
            "dynamic_smooth_a65_split_f8_l4", smooth=0.65, factor=8.0, limit=4
        ),
        "dynamic_split_first_last_fp32": dynamic("dynamic_split_first_last_fp32", exclude=edges),
        "dynamic_split_ffn_fp32": dynamic("dynamic_split_ffn_fp32", exclude=ffn),
        "dynamic_split_head_fp32": dynamic("dynamic_split_head_fp32", exclude=head),
        "dynamic_split_attention_int8": dynamic("dynamic_split_attention_int8", activation_matmuls=True),
        "dynamic_no_split_attention_int8": dynamic(
            "dynamic_no_split_attention_int8", split=False, activation_matmuls=True
        ),
        **(
            {
                "fused_dynamic_split": dynamic("fused_dynamic_split", source=fused),
                "fused_dynamic_no_split": dynamic("fused_dynamic_no_split", source=fused, split=False),
            }
            if fused is not None
            else {}
        ),
        "static_minmax_all_matmuls": static("static_minmax_all_matmuls", method="MinMax", weights_only=False),
        "static_minmax": static("static_minmax", method="MinMax", weights_only=True),
        "static_percentile": static("static_percentile", method="Percentile", weights_only=True),
        "static_entropy": static("static_entropy", method="Entropy", weights_only=True),
        "static_minmax_split": static("static_minmax_split", method="MinMax", weights_only=True, split=True),
        "static_minmax_s8s8": static(
            "static_minmax_s8s8", method="MinMax", weights_only=True, int8_activations=True
        ),
        "shipped_x64quantprecision": shipped_with({"session.x64quantprecision": "1"}, "all"),
        "shipped_opt_extended": shipped_with({}, "extended"),
        "shipped_opt_basic": shipped_with({}, "basic"),
        **(
            {
                f"fp32_{label}": (lambda config=config: (fused, config, "all"))
                for label, config in {
                    "no_spinning": {"session.intra_op.allow_spinning": "0"},
                    "no_mem_pattern": {"enable_mem_pattern": "0"},
                    "no_arena": {"enable_cpu_mem_arena": "0"},
                }.items()
            }
            if fused is not None
            else {}
        ),
    }


def prepare(source: Path, task: str, work: Path) -> tuple[Path, Path, Any, list[Any], list[Any]]:
    """The fp32 artifact, its plain export, the tokenizer, validation and calibration batches."""
    from transformers import AutoTokenizer

    from workflows.conversion import parity

    out = convert(source, work / f"{task}-fp32", task=task, precision="fp32")
    plain = work / f"{task}-fp32-scratch" / "export.onnx"
    tokenizer = AutoTokenizer.from_pretrained(str(source))
    check = parity.check_batches(tokenizer, parity.validation_items(task), max_length=128)
    calibration = parity.check_batches(tokenizer, parity.calibration_items(task), max_length=128)
    return out / "model.onnx", plain, tokenizer, check, calibration


def shape_feeds(tokenizer: Any) -> dict[str, dict[str, np.ndarray]]:
    return {shape: encode_shape(tokenizer, shape) for shape in ("b1_natural", "b8_seq128")}


def timings(
    sessions: dict[str, Any], feeds: dict[str, np.ndarray], *, calls: int, rounds: int
) -> dict[str, float]:
    """Median ms per call of each session, all interleaved in each round."""
    runs = {}
    for name, s in sessions.items():
        names = {i.name for i in s.get_inputs()}
        feed = {k: v.astype(np.int64) for k, v in feeds.items() if k in names}
        runs[name] = lambda s=s, feed=feed: [s.run(None, feed) for _ in range(calls)]
    return {name: ms / calls for name, ms in interleaved(runs, rounds=rounds).items()}


def min_cosine(reference: np.ndarray, candidate: np.ndarray) -> float:
    from workflows.conversion.parity import cosines

    return float(np.min(cosines(reference, candidate)))


def classifier_figures(work: Path, prefixes: tuple[str, ...] = ()) -> dict[str, Any]:
    """Argmax agreement of every variant on the random DeBERTa-v2 classifier, and the guard's verdict."""
    from workflows.conversion import guard
    from workflows.conversion.random_models import build_random_model
    from workflows.spec.pipeline import ConvertSpec

    source = build_random_model(
        "deberta-v2", work / "deberta-src", task="classification", hidden=384, layers=6, heads=6, head_std=0.3
    )
    fused, plain, _, check, calibration = prepare(source, "classification", work / "deberta")
    reference = run_all(session(plain), check)
    # Labels this close to a tie move under any rounding: the fp32 artifact's own agreement is the floor.
    fp32_labels = run_all(session(fused), check).argmax(axis=1)
    out_fp32 = round(float((fp32_labels == reference.argmax(axis=1)).mean()), 4)
    spec = ConvertSpec()
    thresholds = guard.GuardThresholds(
        min_cosine=spec.int8_min_cosine,
        min_agreement=spec.int8_min_agreement,
        max_distribution_shift=spec.int8_max_distribution_shift,
        min_variation_kept=spec.int8_min_variation_kept,
    )
    out: dict[str, Any] = {"classifier_fp32_artifact_argmax_agreement": out_fp32}
    margins = np.sort(reference, axis=1)
    out["classifier_median_top2_margin"] = round(float(np.median(margins[:, -1] - margins[:, -2])), 4)
    for name, build in variants(plain, work / "deberta-variants", calibration).items():
        if prefixes and not name.startswith(prefixes) and name != "dynamic_shipped":
            continue
        try:
            path, config, level = build()
            logits = run_all(session(path, config, level), check)
        except Exception as error:  # a variant the quantizer cannot build is a figure, not a stop
            out[f"classifier_{name}_error"] = f"{type(error).__name__}: {error}"[:200]
            continue
        verdict = guard.check_classifier(reference, logits, labels=[], thresholds=thresholds)
        out[f"classifier_{name}_argmax_agreement"] = round(float(verdict.argmax_agreement or 0.0), 4)
        out[f"classifier_{name}_guard_passes"] = verdict.passed
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument(
        "--only", default="", help="comma-separated variant name prefixes to build (default: every variant)"
    )
    parser.add_argument("--no-classifier", action="store_true", help="skip the random DeBERTa classifier")
    args = parser.parse_args()
    import onnxruntime

    from workflows.conversion.quantize import MAX_OUTLIERS, OUTLIER_FACTOR
    from workflows.conversion.source import bundled_model_path

    single_thread()
    figures: dict[str, Any] = {**machine(), "onnxruntime": onnxruntime.__version__, "rounds": args.rounds}
    figures["model"] = "all-MiniLM-L6-v2 (bundled)"
    figures["shipped_outlier_factor"], figures["shipped_max_outliers"] = OUTLIER_FACTOR, MAX_OUTLIERS
    figures["load_average_1m_before"] = figures.pop("load_average_1m")
    work = Path(tempfile.mkdtemp(prefix="int8-variants-"))
    fp32, plain, tokenizer, check, calibration = prepare(bundled_model_path(), "embedding", work / "minilm")
    reference = run_all(session(fp32), check)
    sessions: dict[str, Any] = {"fp32": session(fp32)}
    prefixes = tuple(p for p in args.only.split(",") if p)
    for name, build in variants(plain, work / "minilm-variants", calibration, fused=fp32).items():
        if prefixes and not name.startswith(prefixes) and name != "dynamic_shipped":
            continue
        try:
            path, config, level = build()
            sessions[name] = session(path, config, level)
        except Exception as error:  # a variant the quantizer cannot build is a figure, not a stop
            figures[f"variant_{name}_error"] = f"{type(error).__name__}: {error}"[:200]
            continue
        figures[f"variant_{name}_min_cosine"] = round(
            min_cosine(reference, run_all(sessions[name], check)), 5
        )
    for shape, feeds in shape_feeds(tokenizer).items():
        calls = B1_CALLS if shape == "b1_natural" else 1
        ms = timings(sessions, feeds, calls=calls, rounds=args.rounds)
        figures[f"fp32_{shape}_ms"] = round(ms["fp32"], 3)
        for name in sessions:
            if name != "fp32":
                figures[f"variant_{name}_{shape}_ms"] = round(ms[name], 3)
                figures[f"variant_{name}_{shape}_over_fp32"] = round(ms["fp32"] / ms[name], 3)
    if not args.no_classifier:
        figures.update(classifier_figures(work, prefixes))
    figures["load_average_1m_after"] = round(__import__("os").getloadavg()[0], 2)
    rows = []
    for name in (n for n in sessions if n != "fp32"):
        v = f"variant_{name}"
        rows.append(
            [
                name,
                *(
                    f"{figures[f'{v}_{s}_ms']:.2f} ({figures[f'{v}_{s}_over_fp32']:.2f}x)"
                    for s in ("b1_natural", "b8_seq128")
                ),
                f"{figures[f'{v}_min_cosine']:.4f}",
                str(figures.get(f"classifier_{name}_argmax_agreement", "error")),
                str(figures.get(f"classifier_{name}_guard_passes", "-")),
            ]
        )
    print(
        table(
            [
                "variant",
                "b1 natural ms (x fp32)",
                "b8 seq128 ms (x fp32)",
                "min cosine",
                "classifier agreement",
                "guard",
            ],
            rows,
        )
    )
    errors = {k: v for k, v in figures.items() if k.endswith("_error")}
    for key, value in errors.items():
        print(f"{key}: {value}")
    print(
        f"fp32 ms: b1 {figures['fp32_b1_natural_ms']}, b8 {figures['fp32_b8_seq128_ms']}; cpu flags {figures['cpu_flags']}; "
        f"onnxruntime {figures['onnxruntime']}; load average {figures['load_average_1m_before']} -> {figures['load_average_1m_after']}"
    )
    write_figures("int8_variants", figures)


if __name__ == "__main__":
    main()
