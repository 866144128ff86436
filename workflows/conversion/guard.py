"""The INT8 collapse guard (F29): compare INT8 with fp32 on the validation set, refuse a collapse.

In the field, a dynamically quantized mDeBERTa-NLI answered 'neutral' for every input. One
figure misses that when the validation labels are skewed, so the guard looks three ways:

* argmax agreement (classifiers): the share of inputs keeping their top label;
* distribution shift (classifiers): total variation distance between the two predicted-label
  histograms; a collapse onto one label moves the other labels' whole mass;
* variation kept (both tasks): how much of fp32's input-dependent output spread the INT8 graph
  keeps. A collapsed graph answers almost the same thing for every input (ratio near 0) even
  when the labels it lands on happen to agree; quantization noise only adds spread.

Embeddings are also judged by the per-text cosine between INT8 and fp32 vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workflows.conversion.parity import cosines


@dataclass(frozen=True)
class GuardThresholds:
    """Where the guard refuses an INT8 graph (``ConvertSpec`` says why each default)."""

    min_cosine: float
    min_agreement: float
    max_distribution_shift: float
    min_variation_kept: float


@dataclass
class GuardResult:
    min_cosine: float
    mean_cosine: float
    variation_kept: float
    argmax_agreement: float | None
    distribution_shift: float | None
    passed: bool
    diagnosis: str


def _input_dependent(outputs: np.ndarray, *, logits: bool) -> np.ndarray:
    values = outputs.astype(np.float64)
    if logits:  # softmax ignores a per-input shift
        values = values - values.mean(axis=1, keepdims=True)
    return np.asarray(values - values.mean(axis=0, keepdims=True))


def variation_kept(fp32: np.ndarray, int8: np.ndarray, *, logits: bool) -> float:
    """Norm of INT8's input-dependent part over fp32's (1.0 when fp32 itself is constant)."""
    reference = float(np.linalg.norm(_input_dependent(fp32, logits=logits)))
    if reference < 1e-12:
        return 1.0
    return float(np.linalg.norm(_input_dependent(int8, logits=logits)) / reference)


def _histogram(labels: np.ndarray, classes: int) -> np.ndarray:
    return np.bincount(labels, minlength=classes) / max(1, labels.size)


def _counts(labels: np.ndarray, names: list[str]) -> str:
    counts = np.bincount(labels, minlength=len(names))
    return ", ".join(f"{names[i]} {int(c)}" for i, c in enumerate(counts) if c)


def check_classifier(
    fp32: np.ndarray, int8: np.ndarray, *, labels: list[str], thresholds: GuardThresholds
) -> GuardResult:
    """Judge INT8 logits against fp32 logits of the same inputs."""
    names = labels or [f"LABEL_{i}" for i in range(fp32.shape[1])]
    ref, new = fp32.argmax(axis=1), int8.argmax(axis=1)
    agreement = float((ref == new).mean())
    shift = float(0.5 * np.abs(_histogram(ref, len(names)) - _histogram(new, len(names))).sum())
    kept = variation_kept(fp32, int8, logits=True)
    problems = []
    if agreement < thresholds.min_agreement:
        problems.append(f"argmax agreement {agreement:.3f} < {thresholds.min_agreement}")
    if shift > thresholds.max_distribution_shift:
        problems.append(f"label distribution shift {shift:.3f} > {thresholds.max_distribution_shift}")
    if kept < thresholds.min_variation_kept:
        problems.append(f"variation kept {kept:.3f} < {thresholds.min_variation_kept}")
    top = int(np.bincount(new, minlength=len(names)).argmax())
    share = float((new == top).mean())
    margins = np.sort(fp32, axis=1)
    figures = (
        f"INT8 predicts [{_counts(new, names)}], fp32 [{_counts(ref, names)}] on {len(ref)} validation inputs; "
        f"median fp32 top-2 margin {float(np.median(margins[:, -1] - margins[:, -2])):.3g}"
    )
    if not problems:
        diagnosis = f"INT8 agrees with fp32: {figures}."
    elif share >= 0.9 and _histogram(ref, len(names)).max() < 0.9 or kept < thresholds.min_variation_kept:
        diagnosis = f"INT8 predictions collapsed: {share:.0%} predicted '{names[top]}' ({'; '.join(problems)}). {figures}."
    else:
        diagnosis = f"INT8 predictions diverge from fp32 ({'; '.join(problems)}). {figures}."
    cos = cosines(fp32, int8)
    return GuardResult(float(cos.min()), float(cos.mean()), kept, agreement, shift, not problems, diagnosis)


def check_embeddings(fp32: np.ndarray, int8: np.ndarray, *, thresholds: GuardThresholds) -> GuardResult:
    """Judge INT8 embeddings against fp32 embeddings of the same texts."""
    cos = cosines(fp32, int8)
    kept = variation_kept(fp32, int8, logits=False)
    worst = int(cos.argmin())
    figures = (
        f"min cosine {cos.min():.4f} (text #{worst}), mean {cos.mean():.4f}, variation kept {kept:.3f} "
        f"over {len(cos)} texts"
    )
    problems = []
    if cos.min() < thresholds.min_cosine:
        problems.append(f"min cosine below {thresholds.min_cosine}")
    if kept < thresholds.min_variation_kept:
        problems.append(f"variation kept below {thresholds.min_variation_kept}: the vectors collapsed")
    diagnosis = (
        f"INT8 embeddings agree with fp32: {figures}."
        if not problems
        else f"INT8 embeddings diverge from fp32 ({'; '.join(problems)}): {figures}."
    )
    return GuardResult(float(cos.min()), float(cos.mean()), kept, None, None, not problems, diagnosis)
