"""INT8 for the convert step: the bounded quantization pass, then the collapse guard (F29)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from workflows.contracts import QuantizationReport
from workflows.conversion import guard, parity
from workflows.conversion.bounded import run_bounded
from workflows.conversion.quantize import MAX_OUTLIERS, OUTLIER_FACTOR, save_calibration
from workflows.errors import ConversionFailed, QuantizationCollapsed
from workflows.spec.pipeline import ConvertSpec

INT8_METHOD = (
    "onnxruntime quantize_dynamic: per-channel symmetric int8 weights, per-tensor uint8 activations (u8s8); "
    f"outlier activation channels (> {OUTLIER_FACTOR:g}x the median channel range, at most {MAX_OUTLIERS} "
    "per input) split into fp32 MatMuls added after the bias, which stays fused into the INT8 MatMul; "
    "one graph for every x86-64 ISA: onnxruntime picks the u8s8 kernel (AMX-INT8, AVX-512 VNNI, AVX-VNNI "
    "or AVX2) on the serving CPU at session load"
)
STATIC_INT8_METHOD = (
    f"static INT8 for OpenVINO: outlier activation channels (> {OUTLIER_FACTOR:g}x the median channel range, "
    f"at most {MAX_OUTLIERS} per input) split into fp32 MatMuls, the rest quantized by NNCF (model type "
    "transformer: SmoothQuant, per-tensor activation ranges from the calibration texts, per-channel int8 "
    "weights, fast bias correction) into QDQ pairs, which OpenVINO's CPU plugin runs on its INT8 kernels "
    "(VNNI or AMX), the rest of the graph in its inference precision"
)


def _thresholds(convert: ConvertSpec) -> guard.GuardThresholds:
    return guard.GuardThresholds(
        min_cosine=convert.int8_min_cosine,
        min_agreement=convert.int8_min_agreement,
        max_distribution_shift=convert.int8_max_distribution_shift,
        min_variation_kept=convert.int8_min_variation_kept,
    )


def build_int8(
    plain: Path,
    fp32_outputs: np.ndarray,
    checked: parity.ParityCheck,
    *,
    tokenizer: Any,
    task: str,
    labels: list[str],
    convert: ConvertSpec,
    max_length: int,
    scratch: Path,
    static: bool = False,
) -> tuple[Path, QuantizationReport]:
    """Quantize the plain export under the pass bounds, then apply the collapse guard (F29).

    ``static``: the graph OpenVINO serves (``quantize_static``), calibrated text by text (padding
    would enter a static activation range); otherwise onnxruntime's dynamic INT8 (``quantize``).

    Raises:
        ConversionFailed: the quantization pass failed or ran past its bounds.
        QuantizationCollapsed: INT8 diverges from fp32 on the validation set.
    """
    items = parity.calibration_items(task)
    batches = (
        [parity.check_batches(tokenizer, [item], max_length=max_length)[0] for item in items]
        if static
        else parity.check_batches(tokenizer, items, max_length=max_length)
    )
    calibration = save_calibration(batches, scratch / "calibration.npz")
    target = scratch / "int8.onnx"
    outcome = run_bounded(
        "quantize_static" if static else "quantize",
        {"source": str(plain), "target": str(target), "calibration": str(calibration)},
        timeout_s=convert.optimizer_timeout_s,
        memory_gib=convert.optimizer_memory_gib,
    )
    if not outcome.ok:
        raise ConversionFailed(
            f"INT8 quantization {outcome.reason}.",
            fix="raise convert.optimizer_memory_gib / optimizer_timeout_s, or use convert.precision fp32",
        )
    int8_outputs = parity.run_onnx(target, checked.batches)
    thresholds = _thresholds(convert)
    result = (
        guard.check_classifier(fp32_outputs, int8_outputs, labels=labels, thresholds=thresholds)
        if task == "classification"
        else guard.check_embeddings(fp32_outputs, int8_outputs, thresholds=thresholds)
    )
    if not result.passed:
        raise QuantizationCollapsed(result.diagnosis, fix="keep fp32 (convert.precision: fp32)")
    report = quantization_report(
        STATIC_INT8_METHOD if static else INT8_METHOD,
        result,
        outcome.result,
        thresholds=thresholds,
        texts=int(fp32_outputs.shape[0]),
        plain=plain,
        target=target,
    )
    return target, report


def quantization_report(
    method: str,
    result: guard.GuardResult,
    figures: dict[str, Any],
    *,
    thresholds: guard.GuardThresholds,
    texts: int,
    plain: Path,
    target: Path,
    diagnosis: str | None = None,
) -> QuantizationReport:
    """The manifest's record of a reduced-precision graph: how it was made and the guard's verdict.

    Args:
        method: how the graph was made.
        result: the guard's verdict on the validation set.
        figures: the bounded pass's result (``fp32_nodes``, and ``outlier_channels`` for INT8).
        thresholds: what the guard held it to.
        texts: validation inputs compared.
        plain: the fp32 graph, target: the reduced one (their size ratio is recorded).
        diagnosis: the verdict's text, when several verdicts were joined (default: the result's).
    """
    return QuantizationReport(
        method=method,
        fp32_nodes=int(figures.get("fp32_nodes", 0)),
        outlier_channels=int(figures.get("outlier_channels", 0)),
        texts=texts,
        min_cosine=result.min_cosine,
        mean_cosine=result.mean_cosine,
        variation_kept=result.variation_kept,
        argmax_agreement=result.argmax_agreement,
        distribution_shift=result.distribution_shift,
        thresholds={k: float(v) for k, v in vars(thresholds).items()},
        passed=result.passed,
        diagnosis=diagnosis if diagnosis is not None else result.diagnosis,
        size_ratio=round(target.stat().st_size / plain.stat().st_size, 4),
    )
