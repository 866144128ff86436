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

Measured on MiniLM (bench/int8_variants.py, one thread, AVX-512 VNNI without AMX, load about 2):

* SmoothQuant-style migration (``smooth_outliers``; exact in fp32) removes the split's cost
  (b8/128 as fast as no split, about 0.8x the split's time) but not its accuracy: min cosine to
  fp32 0.973 / 0.987 / 0.990 / 0.987 / 0.986 / 0.976 at alpha 0.5 / 0.6 / 0.65 / 0.7 / 0.75 /
  0.8, 0.989 smoothing every input, against the split's 0.9936; smoothing then splitting 0.991-0.993
  at the split's speed. Per-output-channel weight scales absorb a scaled-up input row badly: the
  row that takes channel 99's range sets the scale of every output channel. Not used.
* Fusion: at ORT_ENABLE_ALL every weight MatMul of the split graph becomes MatMulIntegerToFloat or
  DynamicQuantizeMatMul (18 + 18, as without the split): the split does not stop it. It did stop
  the bias from fusing (the outlier Add sat between the MatMul and its bias: 71 Adds left), so the
  outlier part is now added after the bias (46 Adds): 1.05x at b8/128 (95% interval 1.04-1.08,
  n 21) and 1.03x at b1 (1.02-1.04, n 201), the same graph in fp32.
* Quantizing the fused graph (Attention ops) instead of the plain export: slower (b8 0.93x the
  plain export's split) and less accurate (0.989 split, 0.942 not split).
* Attention's two activation MatMuls (Q.K^T, P.V) in INT8 as well, as sentence-transformers'
  qint8 export does (48 INT8 MatMuls instead of 36): with the split, b8/128 131 ms against 135 ms
  (within the noise) and min cosine 0.990 against 0.993; without the split 114 ms at 0.958. Not used.
* Spreading each outlier channel over k copies of 1/k (the weight row repeated; exact in fp32, every
  MatMul INT8, no fp32 MatMul or Add): min cosine 0.992 and b8/128 216 ms against the split's
  118 ms, in one run. Not used.
* Which inputs to split: QKV and FFN inputs only 0.988; adding the FFN output's input 0.9937, the
  same as splitting every input (0.9930; the attention output's input has an outlier in layer 0
  only), at times within the noise.
* s8s8: onnxruntime's dynamic path quantizes activations to uint8 only (DynamicQuantizeLinear),
  the u8s8 kernels VNNI runs natively (VPDPBUSD); int8 activations exist only for static QDQ,
  which loses the short inputs. No lever here depends on AMX vs VNNI: MLAS has u8s8 kernels for
  both (its AMX QGEMM falls back to VNNI for small GEMMs) and picks one on the serving CPU.

OpenVINO runs this dynamic graph on its fp32 GEMMs; the graph it serves is static INT8, built by
``quantize_static`` on top of the same outlier split.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

OUTLIER_FACTOR = 4.0
MAX_OUTLIERS = 8
"""At most this many channels per tensor go to fp32 (a handful carry the outliers in BERT models)."""
SMOOTH_ALPHA = 0.5
"""SmoothQuant's migration strength: 0 leaves activations as they are, 1 moves all their range into the weights."""


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


def bias_add(model: Any, tensor: str, weights: dict[str, Any]) -> Any | None:
    """The Add node that is ``tensor``'s only consumer and adds a 1-D constant to it, if any."""
    consumers = [n for n in model.graph.node if tensor in n.input]
    if len(consumers) != 1 or consumers[0].op_type != "Add" or tensor in {o.name for o in model.graph.output}:
        return None
    other = [i for i in consumers[0].input if i != tensor]
    if len(other) != 1 or other[0] not in weights or len(weights[other[0]].dims) != 1:
        return None
    return consumers[0]


def insert_nodes(model: Any, before: dict[str, list[Any]], after: dict[str, list[Any]]) -> None:
    """Put each ``before[name]`` right before node ``name`` and each ``after[name]`` right after it
    (the graph's node order stays topological)."""
    ordered = []
    for node in model.graph.node:
        ordered.extend([*before.get(node.name, []), node, *after.get(node.name, [])])
    del model.graph.node[:]
    model.graph.node.extend(ordered)


def split_outliers(
    model: Any,
    ranges: dict[str, np.ndarray],
    *,
    factor: float = OUTLIER_FACTOR,
    limit: int = MAX_OUTLIERS,
    fuse_bias: bool = True,
) -> tuple[list[str], int]:
    """Rewrite ``model`` in place so outlier channels bypass quantization.

    For input X with outlier channels O and each consumer ``Y = X @ W``:
    ``Y = (X * mask) @ W + X[..., O] @ W[O, :]``, with mask zero on O; with ``fuse_bias``, a bias
    ``Y + b`` becomes ``((X * mask) @ W + b) + X[..., O] @ W[O, :]`` so the bias still fuses into
    the quantized MatMul (one pass over the output fewer per MatMul). Returns the names of the new
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
            anchor = node
            bias = bias_add(model, output, weights) if fuse_bias else None
            if bias is not None:
                # The bias Add stays right after the INT8 MatMul, where onnxruntime fuses it into
                # MatMulIntegerToFloat / DynamicQuantizeMatMul; the outlier part is added after it.
                bias.input[list(bias.input).index(output)] = f"{part}_int8"
                output, bias.output[0] = bias.output[0], f"{part}_biased"
                anchor, summand = bias, f"{part}_biased"
            else:
                summand = f"{part}_int8"
            after[anchor.name] = [
                helper.make_node(
                    "MatMul", [f"{prefix}_x", f"{part}_w"], [f"{part}_fp32"], name=f"{part}_fp32"
                ),
                helper.make_node("Add", [summand, f"{part}_fp32"], [output], name=f"{part}_sum"),
            ]
            keep_fp32.append(f"{part}_fp32")
    insert_nodes(model, before, after)
    return keep_fp32, split


def smooth_outliers(
    model: Any,
    ranges: dict[str, np.ndarray],
    *,
    alpha: float = SMOOTH_ALPHA,
    factor: float = OUTLIER_FACTOR,
    every: bool = False,
) -> int:
    """Migrate activation outliers into the weights (SmoothQuant-style), in place.

    For input X with per-channel range r and each consumer ``Y = X @ W`` (weight row range w):
    ``s = r**alpha / w**(1 - alpha)``, ``Y = (X / s) @ (diag(s) W)``: one elementwise Mul per
    input tensor, exact in fp32, and the quantizer then sees flatter activations and slightly
    rougher weights (per output channel, which absorbs most of it). Only inputs that carry an
    outlier (a channel over ``factor`` x the median range) are smoothed unless ``every``. The
    division is not folded into the preceding LayerNorm: in post-LN encoders its output is also
    the residual. ``ranges`` gains the smoothed inputs' ranges (for a split after it). Returns the
    number of inputs smoothed.
    """
    from onnx import helper, numpy_helper

    weights = {i.name: i for i in model.graph.initializer}
    before: dict[str, list[Any]] = {}
    smoothed = 0
    for index, (tensor, consumers) in enumerate(weight_matmuls(model).items()):
        reach = np.maximum(ranges[tensor].astype(np.float64), 1e-5)
        if not every and not outlier_channels(reach, factor=factor, limit=reach.shape[0]):
            continue
        matrices = [numpy_helper.to_array(weights[n.input[1]]) for n in consumers]
        rows = np.maximum(np.max([np.abs(m).max(axis=1) for m in matrices], axis=0), 1e-5)
        scale = reach**alpha / rows ** (1.0 - alpha)
        scale = np.clip(scale / np.exp(np.mean(np.log(scale))), 1e-3, 1e3)
        prefix = f"int8_smooth_{index}"
        model.graph.initializer.append(
            numpy_helper.from_array((1.0 / scale).astype(np.float32), f"{prefix}_inverse")
        )
        before[consumers[0].name] = [
            helper.make_node("Mul", [tensor, f"{prefix}_inverse"], [f"{prefix}_x"], name=prefix)
        ]
        for number, (node, matrix) in enumerate(zip(consumers, matrices, strict=True)):
            name = f"{prefix}_{number}_w"
            model.graph.initializer.append(
                numpy_helper.from_array((matrix * scale[:, None]).astype(np.float32), name)
            )
            node.input[0], node.input[1] = f"{prefix}_x", name
        ranges[f"{prefix}_x"] = (reach / scale).astype(np.float32)
        smoothed += 1
    insert_nodes(model, before, {})
    return smoothed


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
    smooth: float | None = None,
    smooth_every: bool = False,
    fuse_bias: bool = True,
    activation_matmuls: bool = False,
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
        smooth: first migrate outliers into the weights with this alpha (then split what is left
            when ``split``).
        smooth_every: smooth every weight-MatMul input, not only those with outliers.
        fuse_bias: add the outlier part after the bias, so the bias fuses into the INT8 MatMul.
        activation_matmuls: also quantize the MatMuls of two activations (attention's Q.K^T and
            P.V), as sentence-transformers' qint8 export does.
    """
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(source)
    keep_fp32: list[str] = []
    channels = 0
    smoothed = 0
    if split or smooth is not None:
        with np.load(calibration) as archive:
            grouped: dict[str, dict[str, np.ndarray]] = {}
            for key in archive.files:
                batch, name = key.split("/", 1)
                grouped.setdefault(batch, {})[name] = archive[key]
        ranges = channel_ranges(Path(source), [grouped[b] for b in sorted(grouped)])
        if smooth is not None:
            smoothed = smooth_outliers(model, ranges, alpha=smooth, factor=factor, every=smooth_every)
        if split:
            keep_fp32, channels = split_outliers(
                model, ranges, factor=factor, limit=limit, fuse_bias=fuse_bias
            )
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
            extra_options={
                "DefaultTensorType": onnx.TensorProto.FLOAT,
                "MatMulConstBOnly": not activation_matmuls,
            },
        )
    finally:
        Path(prepared).unlink(missing_ok=True)
    ops = [n.op_type for n in onnx.load(target, load_external_data=False).graph.node]
    return {
        "fp32_nodes": len(keep_fp32),
        "outlier_channels": channels,
        "smoothed_inputs": smoothed,
        "int8_matmuls": sum(op in ("MatMulInteger", "DynamicQuantizeMatMul") for op in ops),
    }


def save_calibration(batches: list[dict[str, np.ndarray]], path: Path) -> Path:
    """Write padded batches as one .npz for ``quantize_graph``."""
    arrays = {f"{i:03d}/{name}": value for i, batch in enumerate(batches) for name, value in batch.items()}
    np.savez(path, **arrays)  # type: ignore[arg-type]
    return path
