"""Parity of every supported architecture: fp32 and INT8, as the convert step measures it.

For each family a random-weight model is built from a small config (2 layers, hidden 32; its
tokenizer trained and saved by the installed transformers), once as a classifier and once as an
embedder, and converted by the convert step's ``build_artifact``:

- fp32: the parity gate's worst absolute difference and cosine against transformers in process
  (64 texts, single texts and pairs);
- INT8 (dynamic, outlier channels in fp32): min and mean cosine to fp32 for the embedder, and
  argmax agreement for the classifier, or the collapse guard's refusal (F29) where INT8 flips the
  labels of a random classifier whose logits are near ties. Random weights say nothing about a
  trained model's INT8 quality; the figures show that each family quantizes and is guarded.

Served latency is not measured here: ``make test-matrix`` serves every family on the real
container stack and prints its p50 at b1 natural.

Usage: python bench/architectures.py [--families bert,roberta,...]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from conversion_support import convert, machine, table, write_figures


def manifest_of(artifact: Path) -> dict[str, Any]:
    from workflows.conversion.manifest import read_manifest

    return read_manifest(artifact).model_dump(mode="json")


def measure(family: str, root: Path) -> dict[str, Any]:
    from workflows.conversion.random_models import build_random_model
    from workflows.errors import QuantizationCollapsed

    figures: dict[str, Any] = {}
    started = time.monotonic()
    for task in ("classification", "embedding"):
        source = build_random_model(family, root / f"{family}-{task}", task=task)
        fp32 = manifest_of(convert(source, root / f"{family}-{task}-fp32", task=task, max_length=64))
        figures[f"{task}_fp32_max_abs_diff"] = fp32["parity"]["max_abs_diff"]
        figures[f"{task}_fp32_min_cosine"] = fp32["parity"]["min_cosine"]
        try:
            int8 = manifest_of(
                convert(source, root / f"{family}-{task}-int8", task=task, max_length=64, precision="int8")
            )
        except QuantizationCollapsed as error:
            figures[f"{task}_int8"] = f"refused by the collapse guard: {error}"[:300]
            continue
        quantization = int8["quantization"]
        figures[f"{task}_int8_min_cosine"] = quantization["min_cosine"]
        figures[f"{task}_int8_mean_cosine"] = quantization["mean_cosine"]
        figures[f"{task}_int8_fp32_nodes"] = quantization["fp32_nodes"]
        if quantization.get("argmax_agreement") is not None:
            figures[f"{task}_int8_argmax_agreement"] = quantization["argmax_agreement"]
    figures["seconds"] = round(time.monotonic() - started, 1)
    return figures


def main() -> None:
    from workflows.conversion.random_models import FAMILIES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=",".join(FAMILIES))
    args = parser.parse_args()
    families = [f.strip() for f in args.families.split(",") if f.strip()]

    results: dict[str, Any] = {**machine()}
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-architectures-") as scratch:
        for family in families:
            measured = measure(family, Path(scratch))
            key = family.replace("-", "_")
            results.update({f"{key}_{name}": value for name, value in measured.items()})

            def shown(name: str, measured: dict[str, Any] = measured) -> str:
                value = measured.get(name)
                if value is None:
                    return "refused (F29)" if f"{name.rsplit('_int8', 1)[0]}_int8" in measured else "-"
                return f"{value:.2e}" if "diff" in name else f"{value:.4f}"

            rows.append(
                [
                    family,
                    shown("classification_fp32_max_abs_diff"),
                    shown("embedding_fp32_max_abs_diff"),
                    shown("embedding_int8_min_cosine"),
                    shown("classification_int8_argmax_agreement"),
                ]
            )
            print(f"{family}: {measured}", flush=True)
    results["load_average_1m_after"] = machine()["load_average_1m"]
    print(
        table(
            [
                "family",
                "fp32 max |diff| (classifier)",
                "fp32 max |diff| (embedder)",
                "INT8 min cosine",
                "INT8 agreement",
            ],
            rows,
        )
    )
    write_figures("architectures", results)


if __name__ == "__main__":
    main()
