"""Length bucketing in the serving code: a request of 32 natural texts, bucketed vs one padded batch.

The served artifact is the bundled MiniLM as the convert step ships it; requests go through
``code/inference.py`` exactly as the container calls it (input_fn -> predict_fn -> output_fn),
with ``parameters.batch_size`` 32. "Without" sends ``"bucketing": false``: the request runs as one
batch padded to its longest text. Requests use the benchmark's natural texts (``natural_texts``,
the payload generator), several seeds, interleaved; one intra-op thread. Target: >= 1.7x.

Usage: python bench/bucketing.py [--requests 12] [--rounds 7]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

from conversion_support import ROOT, convert, interleaved, machine, table, write_figures

TARGET = 1.7


def load_serving_code() -> Any:
    spec = importlib.util.spec_from_file_location("inference", ROOT / "artifacts" / "code" / "inference.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    from workflows.benchmark.texts import natural_texts
    from workflows.conversion.source import bundled_model_path

    inference = load_serving_code()
    with tempfile.TemporaryDirectory(prefix="bench-bucketing-") as folder:
        artifact = convert(bundled_model_path(), Path(folder) / "artifact", task="embedding", max_length=256)
        model = inference.model_fn(str(artifact))
        speedups, rows, padded = [], [], {"bucketed": 0, "one batch": 0}
        for seed in range(args.requests):
            texts = natural_texts(32, seed=1000 + seed)

            def request(bucketing: bool, texts: list[str] = texts) -> Any:
                body = json.dumps({"inputs": texts, "parameters": {"batch_size": 32, "bucketing": bucketing}})
                return inference.output_fn(
                    inference.predict_fn(inference.input_fn(body, "application/json"), model), ""
                )

            ms = interleaved(
                {"bucketed": lambda: request(True), "one batch": lambda: request(False)}, rounds=args.rounds
            )
            lengths = [len(ids) for ids in model["tokenizer"](texts)["input_ids"]]
            order = sorted(range(32), key=lengths.__getitem__)
            buckets = inference.length_buckets(order, lengths, 32)
            padded["bucketed"] += sum(len(b) * max(lengths[r] for r in b) for b in buckets)
            padded["one batch"] += 32 * max(lengths)
            speedups.append(ms["one batch"] / ms["bucketed"])
            rows.append(
                [
                    str(seed),
                    f"{min(lengths)}-{max(lengths)}",
                    str(len(buckets)),
                    f"{ms['one batch']:.1f}",
                    f"{ms['bucketed']:.1f}",
                    f"x{speedups[-1]:.2f}",
                ]
            )
    print(table(["request", "tokens", "buckets", "one batch ms", "bucketed ms", "speedup"], rows))
    speedup = statistics.median(speedups)
    print(f"\nmedian speedup x{speedup:.2f} (target x{TARGET}); padded tokens {padded}")
    write_figures(
        "bucketing",
        {
            "bucketing_speedup_b32": round(speedup, 3),
            "bucketing_speedup_b32_min": round(min(speedups), 3),
            "bucketing_speedup_b32_max": round(max(speedups), 3),
            "padded_tokens_bucketed": padded["bucketed"],
            "padded_tokens_one_batch": padded["one batch"],
            "requests": args.requests,
            "rounds": args.rounds,
            "target_speedup": TARGET,
            "meets_target": speedup >= TARGET,
            **machine(),
        },
    )


if __name__ == "__main__":
    main()
