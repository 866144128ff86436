"""The INT8 variants of bench/int8_variants.py as graphs and sessions: how each is built from the plain
fp32 export (dynamic with or without the outlier split, static QDQ with its calibration) and opened.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

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
