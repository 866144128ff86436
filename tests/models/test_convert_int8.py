"""INT8 conversion and its collapse guard (F29)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from tests.conftest import convert_folder, fast_spec
from workflows.conversion import guard, int8, parity
from workflows.conversion.manifest import read_manifest
from workflows.conversion.quantize import (
    outlier_channels,
    quantize_graph,
    save_calibration,
    smooth_outliers,
    split_outliers,
    weight_matmuls,
)
from workflows.errors import QuantizationCollapsed, SpecInvalid
from workflows.spec.pipeline import parse_spec

ModelFactory = Callable[..., Path]
DEFAULTS = fast_spec("bundled").convert
THRESHOLDS = guard.GuardThresholds(
    min_cosine=DEFAULTS.int8_min_cosine,
    min_agreement=DEFAULTS.int8_min_agreement,
    max_distribution_shift=DEFAULTS.int8_max_distribution_shift,
    min_variation_kept=DEFAULTS.int8_min_variation_kept,
)


def test_int8_embedding_artifact(tiny_bert: Path, tmp_path: Path) -> None:
    # When the tiny BERT is converted to INT8
    artifact = convert_folder(tiny_bert, tmp_path, precision="int8")
    # Then the manifest names the INT8 file (F30) and the guard's figures
    manifest = read_manifest(artifact)
    assert manifest.precision == "int8"
    assert manifest.onnx_file == "model.int8.onnx"
    assert not (artifact / "model.onnx").exists()
    report = manifest.quantization
    assert report is not None and report.passed
    assert report.min_cosine >= DEFAULTS.int8_min_cosine
    assert 0.5 <= report.variation_kept <= 2
    assert report.size_ratio < 0.5
    # And the fp32 parity that judged the export is still recorded
    assert manifest.parity.passed


def test_int8_classifier_passes_the_guard(random_model: ModelFactory, tmp_path: Path) -> None:
    # Given a DeBERTa-v2 classifier whose head has a trained head's margins (a few logits)
    source = random_model("deberta-v2", "classification", head_std=1.0)
    # When converted to INT8
    artifact = convert_folder(source, tmp_path, precision="int8")
    # Then the guard compared labels and passed
    report = read_manifest(artifact).quantization
    assert report is not None
    assert report.argmax_agreement is not None and report.argmax_agreement >= 0.9
    assert report.distribution_shift is not None and report.distribution_shift <= 0.2
    assert report.diagnosis.startswith("INT8 agrees with fp32")


def test_int8_that_collapses_is_refused_and_leaves_nothing(
    random_model: ModelFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a classifier with real margins whose graph collapses before the real quantization pass
    # runs on it (built, not left to one CPU's INT8 rounding: VNNI/AMX kernels round differently)
    source = random_model("deberta-v2", "classification", head_std=1.0)
    real_run_bounded = int8.run_bounded

    def quantize_a_collapsed_graph(task: str, arguments: dict[str, Any], **bounds: float) -> Any:
        collapsed = tmp_path / "collapsed-fp32.onnx"
        zero_classifier_head(Path(arguments["source"]), collapsed)
        return real_run_bounded(task, {**arguments, "source": str(collapsed)}, **bounds)

    monkeypatch.setattr(int8, "run_bounded", quantize_a_collapsed_graph)
    # When converted to INT8
    with pytest.raises(QuantizationCollapsed) as caught:
        convert_folder(source, tmp_path / "out", cached=False, precision="int8")
    # Then the refusal names the figures and the fix, and no artifact is left
    message = str(caught.value)
    assert message.startswith("INT8 predictions collapsed: 100% predicted '")
    assert "on 64 validation inputs" in message
    assert message.endswith("Fix: keep fp32 (convert.precision: fp32)")
    assert not (tmp_path / "out" / "artifact").exists()
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.startswith(".artifact")]


def zero_classifier_head(source: Path, target: Path) -> None:
    """A deliberately collapsed graph: the logits no longer depend on the input (bias only)."""
    model = onnx.load(str(source))
    last = [n for n in model.graph.node if n.op_type in ("MatMul", "Gemm")][-1]
    weights = {i.name: i for i in model.graph.initializer}
    weight = weights[last.input[1]]
    weight.CopyFrom(numpy_helper.from_array(np.zeros_like(numpy_helper.to_array(weight)), weight.name))
    onnx.save(model, str(target))


def test_the_guard_refuses_a_collapsed_classifier(random_model: ModelFactory, tmp_path: Path) -> None:
    # Given a classifier with real margins, its fp32 outputs, and an INT8 graph that collapsed
    from transformers import AutoTokenizer

    source = random_model("deberta-v2", "classification", head_std=1.0)
    artifact = convert_folder(source, tmp_path / "fp32", optimize="none")
    tokenizer = AutoTokenizer.from_pretrained(str(artifact / "tokenizer"))
    batches = parity.check_batches(tokenizer, parity.validation_items("classification"), max_length=64)
    fp32 = parity.run_onnx(artifact / "model.onnx", batches)
    zero_classifier_head(artifact / "model.onnx", tmp_path / "collapsed-fp32.onnx")
    calibration = save_calibration(batches[:1], tmp_path / "calibration.npz")
    quantize_graph(str(tmp_path / "collapsed-fp32.onnx"), str(tmp_path / "collapsed.onnx"), str(calibration))
    int8 = parity.run_onnx(tmp_path / "collapsed.onnx", batches)
    # When the guard judges it
    result = guard.check_classifier(
        fp32, int8, labels=["entailment", "neutral", "contradiction"], thresholds=THRESHOLDS
    )
    # Then it is refused as a collapse: every input lands on one label and the outputs stopped varying
    assert not result.passed
    assert result.variation_kept < 0.01
    assert result.diagnosis.startswith("INT8 predictions collapsed: 100% predicted '")


def test_collapse_onto_the_majority_label_is_still_caught() -> None:
    # Given fp32 logits that favour one label for 90% of inputs, and INT8 that answers it always
    rng = np.random.default_rng(0)
    fp32 = rng.normal(size=(60, 3)) * 0.5
    fp32[:54, 1] += 3.0
    fp32[54:, 0] += 3.0
    int8 = np.tile(fp32.mean(axis=0), (60, 1)) + rng.normal(size=(60, 3)) * 1e-3
    # When judged
    result = guard.check_classifier(fp32, int8, labels=["a", "b", "c"], thresholds=THRESHOLDS)
    # Then labels alone pass (agreement 0.9, shift 0.1) but the lost input dependence does not
    assert result.argmax_agreement == pytest.approx(0.9)
    assert result.distribution_shift == pytest.approx(0.1)
    assert not result.passed
    assert "variation kept 0.00" in result.diagnosis


def test_collapsed_embeddings_are_refused() -> None:
    # Given fp32 embeddings of distinct texts, and INT8 vectors that all became their mean
    rng = np.random.default_rng(1)
    fp32 = rng.normal(size=(40, 16)) + 2.0
    fp32 /= np.linalg.norm(fp32, axis=1, keepdims=True)
    int8 = np.tile(fp32.mean(axis=0), (40, 1))
    # When judged
    result = guard.check_embeddings(fp32, int8, thresholds=THRESHOLDS)
    # Then refused, naming the collapse
    assert not result.passed
    assert "the vectors collapsed" in result.diagnosis


def _plain_export_with_outliers(
    tiny_bert: Path, tmp_path: Path
) -> tuple[Path, Any, list[dict[str, np.ndarray]], dict[str, np.ndarray]]:
    """The tiny BERT's plain export, its graph, validation batches, and ranges where channel 3 of
    every weight-MatMul input is an outlier."""
    from transformers import AutoTokenizer

    artifact = convert_folder(tiny_bert, tmp_path / "fp32", optimize="none")
    model = onnx.load(str(artifact / "model.onnx"))
    tokenizer = AutoTokenizer.from_pretrained(str(artifact / "tokenizer"))
    batches = parity.check_batches(tokenizer, parity.validation_items("embedding")[:16], max_length=64)
    weights = {i.name: i for i in model.graph.initializer}
    ranges = {}
    for tensor, consumers in weight_matmuls(model).items():
        ranges[tensor] = np.ones(weights[consumers[0].input[1]].dims[0])
        ranges[tensor][3] = 50.0
    return artifact, model, batches, ranges


def test_outlier_channels_are_split_exactly(tiny_bert: Path, tmp_path: Path) -> None:
    # Given the tiny BERT's plain export, and ranges where one channel of every input is an outlier
    artifact, model, batches, ranges = _plain_export_with_outliers(tiny_bert, tmp_path)
    # When the outliers are split off
    kept, channels = split_outliers(model, ranges)
    onnx.save(model, str(tmp_path / "split.onnx"))
    # Then one channel per input went to fp32, added after the bias (which stays next to its MatMul),
    # and the fp32 graph computes the same thing
    assert channels == len(ranges)
    assert len(kept) > channels
    assert any(o.endswith("_biased") for n in model.graph.node for o in n.output)
    before = parity.run_onnx(artifact / "model.onnx", batches)
    after = parity.run_onnx(tmp_path / "split.onnx", batches)
    np.testing.assert_allclose(after, before, atol=1e-5)


def test_smoothing_moves_outliers_into_the_weights_exactly(tiny_bert: Path, tmp_path: Path) -> None:
    # Given the tiny BERT's plain export, and ranges where one channel of every input is an outlier
    artifact, model, batches, ranges = _plain_export_with_outliers(tiny_bert, tmp_path)
    inputs = len(ranges)
    # When the outliers are migrated into the weights (before any quantization)
    smoothed = smooth_outliers(model, ranges, alpha=0.5)
    onnx.save(model, str(tmp_path / "smooth.onnx"))
    # Then every input was smoothed, its smoothed range is flat, and the graph computes the same thing
    assert smoothed == inputs
    flat = [r for name, r in ranges.items() if name.startswith("int8_smooth_")]
    assert len(flat) == inputs
    assert all(r.max() / np.median(r) < 50.0 for r in flat)
    before = parity.run_onnx(artifact / "model.onnx", batches)
    after = parity.run_onnx(tmp_path / "smooth.onnx", batches)
    np.testing.assert_allclose(after, before, atol=1e-4)


def test_smoothing_leaves_inputs_without_outliers_alone() -> None:
    # Given a graph whose one weight-MatMul input has no outlier channel
    from onnx import TensorProto, helper

    weight = numpy_helper.from_array(np.ones((4, 2), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])],
        [weight],
    )
    model = helper.make_model(graph)
    # When smoothed (outliers only), then nothing changes; with every=True, the input is smoothed
    assert smooth_outliers(model, {"x": np.ones(4)}) == 0
    assert [n.op_type for n in model.graph.node] == ["MatMul"]
    assert smooth_outliers(model, {"x": np.ones(4)}, every=True) == 1
    assert [n.op_type for n in model.graph.node] == ["Mul", "MatMul"]


def test_outlier_channels_are_the_large_ones_only() -> None:
    ranges = np.array([1.0, 1.2, 0.9, 30.0, 1.1, 5.0, 1.0])
    assert outlier_channels(ranges, factor=4.0, limit=8) == [3, 5]
    assert outlier_channels(ranges, factor=4.0, limit=1) == [3]
    assert outlier_channels(np.ones(5), factor=4.0, limit=8) == []


@pytest.mark.parametrize("value", ["fp16", "float16"])
def test_fp16_is_refused_with_the_reason(value: str) -> None:
    with pytest.raises(
        SpecInvalid, match="fp16 is refused for CPU targets: onnxruntime's CPU execution provider"
    ):
        parse_spec({"name": "x", "convert": {"precision": value}})


def test_quantize_graph_keeps_the_named_nodes_and_honours_the_outlier_bounds(
    tiny_bert: Path, tmp_path: Path
) -> None:
    # Given the tiny BERT's plain export and calibration batches
    from transformers import AutoTokenizer

    artifact = convert_folder(tiny_bert, tmp_path / "fp32", optimize="none")
    plain = artifact / "model.onnx"
    tokenizer = AutoTokenizer.from_pretrained(str(artifact / "tokenizer"))
    batches = parity.check_batches(tokenizer, parity.validation_items("embedding")[:16], max_length=64)
    calibration = save_calibration(batches, tmp_path / "calibration.npz")
    first = next(n for group in weight_matmuls(onnx.load(str(plain))).values() for n in group)
    # When quantized with one weight MatMul named for fp32, and an outlier factor nothing reaches
    figures = quantize_graph(
        str(plain), str(tmp_path / "int8.onnx"), str(calibration), factor=1e9, exclude=(first.name,)
    )
    nodes = {n.name: n.op_type for n in onnx.load(str(tmp_path / "int8.onnx")).graph.node}
    # Then that node is still an fp32 MatMul and counted as such, and no channel was split
    assert nodes[first.name] == "MatMul"
    assert figures["fp32_nodes"] == 1
    assert figures["outlier_channels"] == 0
    assert figures["int8_matmuls"] > 0
