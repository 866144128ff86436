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
from int8_variant_graphs import run_all, session, variants  # noqa: E402

B1_CALLS = 10
"""b1 calls per timed block: one b1 call is a few ms, too short to time alone on a shared host."""


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
