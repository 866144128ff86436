"""Dynamic INT8 with outlier channels kept in fp32.

``quantize_dynamic`` quantizes weights per output channel (int8) and each activation per tensor
at run time (uint8, one scale for the whole batch). Trained BERT-family encoders carry a few
activation channels tens of times larger than the rest (MiniLM: channel 99 reaches 28-30 at the
input of every FFN while 99% of channels stay under 7-8), so one scale leaves the ordinary
channels a handful of levels. Measured on MiniLM against fp32: min cosine 0.965 over 64 texts,
worst on 4-5 token inputs; per-tensor weights 0.84; ``reduce_range`` 0.962; keeping the six
FFN-input MatMuls in fp32 0.981.

Here each weight-MatMul input whose channel range exceeds ``OUTLIER_FACTOR`` times its median
channel range is split (LLM.int8()-style decomposition): those few channels go through a small
fp32 MatMul, the rest (outliers zeroed) through the INT8 one, and the two are added. The sum is
exact in fp32, every large MatMul stays INT8, and MiniLM's minimum cosine rose to 0.99. Ranges
come from a handful of calibration texts distinct from the validation set that judges the result.
Models without outliers (random weights) are left untouched.

Alternatives measured side by side (bench/int8_variants.py, results/int8_variants.json): static
QDQ calibrated on the same texts (MinMax, Percentile or Entropy; all MatMuls or weight MatMuls
only; on the split graph too) loses the short inputs (MiniLM min cosine 0.82-0.92: a fixed
activation scale has to cover the outlier channel for every input); factor 3 / 16 channels gains
a little cosine (0.995) at a speed within the noise of a shared host, factor 8 / 4 channels falls
to 0.987; fp32 first/last layers or FFNs cost 15-45% of the speed-up and still do not keep a
small-margin classifier's labels. Dynamic with the split at 4 / 8 stays.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

OUTLIER_FACTOR = 4.0
MAX_OUTLIERS = 8
"""At most this many channels per tensor go to fp32 (a handful carry the outliers in BERT models)."""


def weight_matmuls(model: Any) -> dict[str, list[Any]]:
    """Input tensor -> the MatMul nodes that multiply it by a 2-D constant weight."""
    weights = {i.name: i for i in model.graph.initializer}
    groups: dict[str, list[Any]] = {}
    for node in model.graph.node:
        if node.op_type == "MatMul" and node.input[1] in weights and len(weights[node.input[1]].dims) == 2:
            groups.setdefault(node.input[0], []).append(node)
    return groups


def channel_ranges(model_path: Path, batches: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Per-channel max |value| of every weight-MatMul input over the calibration batches."""
    import onnx
    import onnxruntime as ort

    model = onnx.load(str(model_path))
    names = list(weight_matmuls(model))
    del model.graph.output[:]
    model.graph.output.extend(
        onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in names
    )
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    # No graph rewrites: fusions would swallow the intermediate tensors being read.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    wanted = {i.name for i in session.get_inputs()}
    ranges: dict[str, np.ndarray] = {}
    for batch in batches:
        values = session.run(names, {k: v for k, v in batch.items() if k in wanted})
        for name, value in zip(names, values, strict=True):
            peak = np.abs(value).reshape(-1, value.shape[-1]).max(axis=0)
            ranges[name] = np.maximum(ranges.get(name, peak), peak)
    return ranges


def outlier_channels(ranges: np.ndarray, *, factor: float, limit: int) -> list[int]:
    """Channels whose range exceeds ``factor`` x the median channel range, largest first."""
    median = float(np.median(ranges))
    order = np.argsort(-ranges)[:limit]
    return sorted(int(c) for c in order if ranges[c] > factor * median)


def split_outliers(
    model: Any, ranges: dict[str, np.ndarray], *, factor: float = OUTLIER_FACTOR, limit: int = MAX_OUTLIERS
) -> tuple[list[str], int]:
    """Rewrite ``model`` in place so outlier channels bypass quantization.

    For input X with outlier channels O and each consumer ``Y = X @ W``:
    ``Y = (X * mask) @ W + X[..., O] @ W[O, :]``, with mask zero on O. Returns the names of the new
    fp32 nodes (to exclude from quantization) and the number of channels split.
    """
    from onnx import helper, numpy_helper

    weights = {i.name: i for i in model.graph.initializer}
    before: dict[str, list[Any]] = {}
    after: dict[str, list[Any]] = {}
    keep_fp32: list[str] = []
    split = 0
    for index, (tensor, consumers) in enumerate(weight_matmuls(model).items()):
        channels = outlier_channels(ranges[tensor], factor=factor, limit=limit)
        if not channels:
            continue
        split += len(channels)
        prefix = f"int8_outliers_{index}"
        mask = np.ones(ranges[tensor].shape[0], np.float32)
        mask[channels] = 0.0
        model.graph.initializer.extend(
            [
                numpy_helper.from_array(mask, f"{prefix}_mask"),
                numpy_helper.from_array(np.array(channels, np.int64), f"{prefix}_channels"),
            ]
        )
        before[consumers[0].name] = [
            helper.make_node("Mul", [tensor, f"{prefix}_mask"], [f"{prefix}_inliers"], name=f"{prefix}_mask"),
            helper.make_node(
                "Gather", [tensor, f"{prefix}_channels"], [f"{prefix}_x"], name=f"{prefix}_gather", axis=-1
            ),
        ]
        keep_fp32.append(f"{prefix}_gather")
        for number, node in enumerate(consumers):
            weight = numpy_helper.to_array(weights[node.input[1]])
            part = f"{prefix}_{number}"
            model.graph.initializer.append(numpy_helper.from_array(weight[channels].copy(), f"{part}_w"))
            output = node.output[0]
            node.input[0] = f"{prefix}_inliers"
            node.output[0] = f"{part}_int8"
            after[node.name] = [
                helper.make_node(
                    "MatMul", [f"{prefix}_x", f"{part}_w"], [f"{part}_fp32"], name=f"{part}_fp32"
                ),
                helper.make_node("Add", [f"{part}_int8", f"{part}_fp32"], [output], name=f"{part}_sum"),
            ]
            keep_fp32.append(f"{part}_fp32")
    ordered = []
    for node in model.graph.node:
        ordered.extend([*before.get(node.name, []), node, *after.get(node.name, [])])
    del model.graph.node[:]
    model.graph.node.extend(ordered)
    return keep_fp32, split


def strip_initializer_value_info(model: Any) -> None:
    """Drop value_info entries for initializers.

    The quantizer turns ``Gemm(transB=1)`` into MatMul with a transposed weight, and a stale
    value_info for that weight then fails shape inference ("Inferred shape and existing shape
    differ in dimension 0: (384) vs (3)"), as seen on dynamo-exported classifiers.
    """
    names = {i.name for i in model.graph.initializer}
    stale = [v for v in model.graph.value_info if v.name in names]
    for entry in stale:
        model.graph.value_info.remove(entry)


def quantize_graph(
    source: str,
    target: str,
    calibration: str,
    split: bool = True,
    *,
    factor: float = OUTLIER_FACTOR,
    limit: int = MAX_OUTLIERS,
    exclude: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Dynamic INT8 of ``source`` into ``target`` (runs in a bounded child process).

    Args:
        source: the fp32 ONNX graph (the plain export: the quantizer then sees every MatMul).
        target: where the INT8 graph is written.
        calibration: an .npz of padded batches (``{batch}/{input}`` keys) for the channel ranges.
        split: keep outlier channels in fp32 (see the module docstring).
        factor: a channel is an outlier above this many times its tensor's median channel range.
        limit: at most this many outlier channels per tensor.
        exclude: further node names left in fp32.
    """
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(source)
    keep_fp32: list[str] = []
    channels = 0
    if split:
        with np.load(calibration) as archive:
            grouped: dict[str, dict[str, np.ndarray]] = {}
            for key in archive.files:
                batch, name = key.split("/", 1)
                grouped.setdefault(batch, {})[name] = archive[key]
        ranges = channel_ranges(Path(source), [grouped[b] for b in sorted(grouped)])
        keep_fp32, channels = split_outliers(model, ranges, factor=factor, limit=limit)
    keep_fp32 += [n.name for n in model.graph.node if n.name in exclude]
    strip_initializer_value_info(model)
    prepared = str(Path(target).with_suffix(".prepared.onnx"))
    onnx.save(model, prepared)
    try:
        quantize_dynamic(
            prepared,
            target,
            per_channel=True,
            weight_type=QuantType.QInt8,
            nodes_to_exclude=keep_fp32,
            # Needed on graphs with contrib ops (fused graphs): without it the quantizer stops at
            # "Unable to find data type for weight_name=...". Harmless elsewhere.
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    finally:
        Path(prepared).unlink(missing_ok=True)
    ops = [n.op_type for n in onnx.load(target, load_external_data=False).graph.node]
    return {
        "fp32_nodes": len(keep_fp32),
        "outlier_channels": channels,
        "int8_matmuls": sum(op in ("MatMulInteger", "DynamicQuantizeMatMul") for op in ops),
    }


def save_calibration(batches: list[dict[str, np.ndarray]], path: Path) -> Path:
    """Write padded batches as one .npz for ``quantize_graph``."""
    arrays = {f"{i:03d}/{name}": value for i, batch in enumerate(batches) for name, value in batch.items()}
    np.savez(path, **arrays)  # type: ignore[arg-type]
    return path
