"""Static INT8 for OpenVINO: outlier channels split into fp32, the rest quantized by NNCF into QDQ pairs.

OpenVINO's CPU plugin runs a dynamic INT8 graph (MatMulInteger fed by DynamicQuantizeLinear) as fp32:
it dequantizes the weights and calls its fp32 GEMMs (``brgemm_avx512_f32``), with a Convert and a
Reorder around each, so MiniLM's dynamic INT8 took 12.2 ms at b1 and 316 ms at b8 x 128 there, 2.3x
and 2.5x its fp32 graph in bf16 (bench/results/peers.json). What it runs as INT8 is a FakeQuantize
(from QuantizeLinear/DequantizeLinear pairs in an ONNX graph) in front of a MatMul: then its profile
shows ``brgemm_avx512_i8`` (VNNI) for every weight MatMul (bench/openvino_static_int8.py).

Static INT8 fixes each activation's scale from calibration texts, so the few huge activation channels
of trained encoders (MiniLM's channel 99, see ``quantize``) would set the scale for every input: NNCF's
own pipeline (SmoothQuant at alpha 0.95, then fast bias correction), calibrated on the convert step's
36 texts, kept a minimum cosine of only 0.982 to fp32 over the 64 validation texts, and 0.993 at b8 x
128 (sentence-transformers' static OpenVINO INT8: 0.938 and 0.996). So the convert step's outlier
split runs first (``quantize.split_outliers``: channels over 4x their tensor's median range, at most
8 per input, go through small fp32 MatMuls added after the bias) and NNCF quantizes the rest, the
split's nodes left out: 0.992 over the validation texts, 0.9985 at b1, 0.996 at b8 x 128.

The graph stays ONNX (``model.int8.onnx``): OpenVINO reads its QDQ pairs as FakeQuantize; onnxruntime
runs it too (emulated in fp32, which the collapse guard compares; OpenVINO's bf16 for the rest moved
the minimum cosine by less than 0.001 in the measurement above).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from workflows.conversion.quantize import MAX_OUTLIERS, OUTLIER_FACTOR, channel_ranges, split_outliers


def calibration_batches(calibration: str) -> list[dict[str, np.ndarray]]:
    """The padded batches ``quantize.save_calibration`` wrote, in order."""
    with np.load(calibration) as archive:
        grouped: dict[str, dict[str, np.ndarray]] = {}
        for key in archive.files:
            batch, name = key.split("/", 1)
            grouped.setdefault(batch, {})[name] = archive[key]
    return [grouped[b] for b in sorted(grouped)]


def quantize_static_graph(
    source: str,
    target: str,
    calibration: str,
    *,
    factor: float = OUTLIER_FACTOR,
    limit: int = MAX_OUTLIERS,
) -> dict[str, Any]:
    """Split outliers, then NNCF's static INT8 of ``source`` into ``target`` (runs in a bounded child).

    Args:
        source: the fp32 ONNX graph (the plain export).
        target: where the QDQ INT8 graph is written.
        calibration: an .npz of padded batches (``{batch}/{input}`` keys): the channel ranges and
            NNCF's activation ranges both come from them.
        factor: a channel is an outlier above this many times its tensor's median channel range.
        limit: at most this many outlier channels per tensor.
    """
    import nncf
    import onnx

    batches = calibration_batches(calibration)
    model = onnx.load(source)
    keep_fp32, channels = split_outliers(
        model, channel_ranges(Path(source), batches), factor=factor, limit=limit
    )
    names = {i.name for i in model.graph.input}
    quantized = nncf.quantize(
        model,
        nncf.Dataset([{k: v for k, v in b.items() if k in names} for b in batches]),
        model_type=nncf.ModelType.TRANSFORMER,
        subset_size=len(batches),
        ignored_scope=nncf.IgnoredScope(names=keep_fp32, validate=False) if keep_fp32 else None,
    )
    onnx.save(quantized, target)
    dequantized = {o for n in quantized.graph.node if n.op_type == "DequantizeLinear" for o in n.output}
    return {
        "fp32_nodes": len(keep_fp32),
        "outlier_channels": channels,
        "int8_matmuls": sum(
            n.op_type == "MatMul" and all(i in dequantized for i in n.input) for n in quantized.graph.node
        ),
    }
