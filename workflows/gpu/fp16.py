"""fp16 weights for GPU targets, with the numerically sensitive ops kept in fp32, and their guard.

The conversion is onnxruntime's own float16 tool (``onnxruntime.transformers.float16``). Kept in
fp32: LayerNorm and Softmax everywhere (their reductions and exponentials overflow fp16's 65504),
and, for DeBERTa-v2, every node of the disentangled attention except the Q/K/V projections (the
relative-position gathers and the c2p/p2c score sums: the field's fp16 trouble with DeBERTa, F29).
The graph keeps fp32 inputs and outputs, so the serving code feeds and reads it as before.

Parity is judged like INT8's (``workflows/conversion/guard.py``: cosine, argmax agreement, label
shift, variation kept), twice, without a GPU: on onnxruntime's CPU provider running the fp16 graph
that ships, and on an fp32 session of the graph with fp16 storage emulated (weights and every
tensor between nodes rounded to fp16, so an activation beyond fp16's 65504 shows as inf/NaN: the
CPU provider runs several fp16 ops in fp32 behind casts, which alone could hide it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from workflows.contracts import QuantizationReport
from workflows.conversion import guard, parity
from workflows.conversion.bounded import run_bounded
from workflows.conversion.int8 import quantization_report
from workflows.errors import ConversionFailed, QuantizationCollapsed

FP16_METHOD = (
    "onnxruntime.transformers.float16: fp16 weights and activations, fp32 inputs/outputs; LayerNorm, Softmax "
    "and DeBERTa's relative attention kept in fp32; parity on the CPU provider (the fp16 graph) and on fp16 "
    "storage emulated in fp32"
)
FP16_MAX = 65504.0
SENSITIVE_OPS = ("LayerNormalization", "SimplifiedLayerNormalization", "SkipLayerNormalization", "Softmax")
# fp16 should lose far less than INT8 does (INT8 floors: cosine 0.98, agreement 0.9, shift 0.2):
# random tiny encoders kept cosine > 0.9999 and every label in fp16 here.
FP16_THRESHOLDS = guard.GuardThresholds(
    min_cosine=0.995, min_agreement=0.95, max_distribution_shift=0.1, min_variation_kept=0.5
)


def relative_attention_nodes(model: Any) -> list[str]:
    """DeBERTa-v2's disentangled-attention nodes, all but the Q/K/V projections (the MatMuls that
    carry the attention's compute stay fp16, including their reuse on the relative embeddings)."""
    return [
        node.name for node in model.graph.node if "/attention/self/" in node.name and "_proj" not in node.name
    ]


def _unique_casts(model: Any) -> None:
    """Drop repeated Cast nodes: the tool inserts one per consumer of a tensor shared by kept-fp32
    nodes (DeBERTa's shared Q/K projections), with one name and one output, which onnxruntime
    refuses ("two nodes with same node name"). The first copy precedes every consumer."""
    seen: set[str] = set()
    kept = []
    for node in model.graph.node:
        if node.op_type == "Cast" and node.name in seen:
            continue
        seen.add(node.name)
        kept.append(node)
    del model.graph.node[:]
    model.graph.node.extend(kept)


def _finite_constants(model: Any) -> int:
    """Clamp fp32 constants beyond fp16's range to its largest finite value; returns how many changed.

    The tool carries every tensor between nodes as fp16, kept-fp32 nodes included (it casts their
    outputs to fp16 and back): an attention mask's fill value (fp32's minimum, -3.4e38) becomes -inf,
    a padded query row, masked entirely, goes through Softmax as all -inf, and the NaN spreads to
    every token at the next layer. Initializers get this clamp from the tool; Constant nodes do not.
    """
    from onnx import TensorProto, numpy_helper

    changed = 0
    for node in model.graph.node:
        if node.op_type != "Constant":
            continue
        for attribute in node.attribute:
            if attribute.name == "value" and attribute.t.data_type == TensorProto.FLOAT:
                values = numpy_helper.to_array(attribute.t)
                if np.abs(values).max(initial=0.0) > FP16_MAX:
                    clipped = np.clip(values, -FP16_MAX, FP16_MAX).astype(np.float32)
                    attribute.t.CopyFrom(numpy_helper.from_array(clipped, attribute.t.name))
                    changed += 1
    return changed


def emulate_fp16_storage(model: Any, kept: set[str]) -> Any:
    """The fp32 graph with every value fp16 would store rounded to fp16: weights (but those only
    kept-fp32 nodes read) and every float tensor between nodes. Run with graph optimizations off,
    it shows what fp16's range and precision do to the model, whatever kernels the CPU provider has.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    readers: dict[str, list[str]] = {}
    for node in model.graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node.name)
    for index, initializer in enumerate(model.graph.initializer):
        if initializer.data_type == TensorProto.FLOAT and not set(readers.get(initializer.name, [])) <= kept:
            values = np.clip(numpy_helper.to_array(initializer), -FP16_MAX, FP16_MAX)
            rounded = numpy_helper.from_array(values.astype(np.float16).astype(np.float32), initializer.name)
            model.graph.initializer[index].CopyFrom(rounded)
    typed = onnx.shape_inference.infer_shapes(model)
    floats = {
        info.name
        for info in [*typed.graph.value_info, *typed.graph.output]
        if info.type.tensor_type.elem_type == TensorProto.FLOAT
    }
    nodes = []
    for node in model.graph.node:
        rounding = []
        for position, name in enumerate(node.output):
            if name in floats:
                node.output[position] = f"{name}__fp32"
                rounding += [
                    helper.make_node("Cast", [f"{name}__fp32"], [f"{name}__fp16"], to=TensorProto.FLOAT16),
                    helper.make_node("Cast", [f"{name}__fp16"], [name], to=TensorProto.FLOAT),
                ]
        nodes += [node, *rounding]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model


def fp16_graph(source: str, target: str, emulated: str, relative_attention: bool = False) -> dict[str, Any]:
    """Bounded pass (``workflows.conversion.bounded``): ``source`` fp32 graph -> ``target`` fp16 graph,
    and ``emulated``, the fp32 graph with fp16 storage emulated (``emulate_fp16_storage``)."""
    import onnx
    from onnxruntime.transformers.float16 import DEFAULT_OP_BLOCK_LIST, convert_float_to_float16

    model = onnx.load(source)
    clamped = _finite_constants(model)
    kept = {n.name for n in model.graph.node if n.op_type in (*DEFAULT_OP_BLOCK_LIST, *SENSITIVE_OPS)}
    if relative_attention:
        kept |= set(relative_attention_nodes(model))
    reference = onnx.ModelProto()
    reference.CopyFrom(model)
    onnx.save(emulate_fp16_storage(reference, kept), emulated)
    del reference
    blocked_nodes = relative_attention_nodes(model) if relative_attention else []
    blocked_ops = [*DEFAULT_OP_BLOCK_LIST, *SENSITIVE_OPS]
    converted = convert_float_to_float16(
        model, keep_io_types=True, op_block_list=blocked_ops, node_block_list=blocked_nodes
    )
    _unique_casts(converted)
    onnx.save(converted, target)
    fp32_nodes = sum(
        1 for node in converted.graph.node if node.op_type in blocked_ops or node.name in set(blocked_nodes)
    )
    return {
        "fp32_nodes": fp32_nodes,
        "relative_attention_nodes": len(blocked_nodes),
        "clamped_constants": clamped,
    }


def judge(
    fp32: np.ndarray, fp16: np.ndarray, *, task: str, labels: list[str]
) -> tuple[guard.GuardResult, str]:
    """The guard's result and a diagnosis naming fp16; non-finite outputs (an fp16 overflow) fail."""
    bad = int((~np.isfinite(fp16)).any(axis=1).sum())
    if bad:
        nan_result = guard.GuardResult(
            0.0, 0.0, 0.0, 0.0 if task == "classification" else None, None, False, ""
        )
        return nan_result, (
            f"fp16 outputs are not finite (inf or NaN) for {bad} of {len(fp16)} validation inputs: an activation "
            "overflowed fp16's range (65504)"
        )
    result = (
        guard.check_classifier(fp32, fp16, labels=labels, thresholds=FP16_THRESHOLDS)
        if task == "classification"
        else guard.check_embeddings(fp32, fp16, thresholds=FP16_THRESHOLDS)
    )
    return result, result.diagnosis.replace("INT8", "fp16")


def run_unoptimized(path: Path, batches: list[dict[str, np.ndarray]]) -> np.ndarray:
    """The graph's first output on ``batches``, with onnxruntime's graph optimizations off (they
    would fold the emulation's rounding casts away)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    return np.concatenate([session.run(None, {k: v for k, v in b.items() if k in names})[0] for b in batches])


def build_fp16(
    plain: Path,
    fp32_outputs: np.ndarray,
    checked: parity.ParityCheck,
    *,
    family: str,
    task: str,
    labels: list[str],
    convert: Any,
    scratch: Path,
) -> tuple[Path, QuantizationReport]:
    """Convert the plain export to fp16 under the pass bounds, then refuse it unless it matches fp32.

    Raises:
        ConversionFailed: the conversion pass failed or ran past its bounds.
        QuantizationCollapsed: the fp16 graph diverges from fp32 on the validation set (F29).
    """
    target, emulated = scratch / "fp16.onnx", scratch / "fp16-emulated.onnx"
    outcome = run_bounded(
        "fp16",
        {
            "source": str(plain),
            "target": str(target),
            "emulated": str(emulated),
            "relative_attention": family == "DeBERTa-v2",
        },
        timeout_s=convert.optimizer_timeout_s,
        memory_gib=convert.optimizer_memory_gib,
    )
    if not outcome.ok:
        raise ConversionFailed(
            f"fp16 conversion {outcome.reason}.",
            fix="raise convert.optimizer_memory_gib / optimizer_timeout_s, or use convert.precision fp32",
        )
    # Both must pass: the graph that ships, and the emulation that stores every value as fp16 (the
    # CPU provider runs some fp16 ops in fp32 behind casts, which could hide an overflow).
    judged = []
    with np.errstate(invalid="ignore", over="ignore"):
        for name, outputs in (
            ("the fp16 graph on the CPU provider", parity.run_onnx(target, checked.batches)),
            ("fp16 storage emulated in fp32", run_unoptimized(emulated, checked.batches)),
        ):
            result, diagnosis = judge(fp32_outputs, outputs, task=task, labels=labels)
            if not result.passed:
                raise QuantizationCollapsed(
                    f"fp16 refused ({name}): {diagnosis}", fix="keep fp32 (convert.precision: fp32)"
                )
            judged.append((result, f"{name}: {diagnosis}"))
    result = min((r for r, _ in judged), key=lambda r: r.min_cosine)
    report = quantization_report(
        FP16_METHOD,
        result,
        outcome.result,
        thresholds=FP16_THRESHOLDS,
        texts=int(fp32_outputs.shape[0]),
        plain=plain,
        target=target,
        diagnosis=" ".join(text for _, text in judged),
    )
    return target, report
