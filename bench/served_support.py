"""Helpers of bench/served_vs_default.py: pooling the default's token vectors, reading what MMS refused."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def pooled(token_vectors: list[Any], lengths: list[int]) -> list[list[float]]:
    """Mean of each text's real-token vectors (the pipeline returns padding positions too)."""
    import numpy as np

    out = []
    for vectors, length in zip(token_vectors, lengths, strict=True):
        array = np.asarray(vectors, dtype=np.float64).reshape(-1, np.asarray(vectors).shape[-1])
        out.append(array[:length].mean(axis=0).tolist())
    return out


def refused_size(workdir: Path, name: str) -> int | None:
    """The response size Multi Model Server refused to pass on ("Message size exceed limit: N")."""
    logs = workdir / "endpoint-logs"
    sizes = [
        int(match)
        for path in sorted(logs.glob(f"{name}-default*.log"))
        for match in re.findall(r"Message size exceed limit: (\d+)", path.read_text(errors="replace"))
    ]
    return max(sizes) if sizes else None


def print_table(
    results: dict[str, Any],
    *,
    models: Iterable[str],
    shapes: Iterable[str],
    concurrency: Iterable[int],
    variants: Iterable[str],
) -> None:
    """One line per measured cell: samples/s, p50, p99 and the ratio to the default's basis."""
    print(
        f"{'model':<8} {'shape':<11} {'conc':>4} {'variant':<8} {'samples/s':>10} {'p50 ms':>9} {'p99 ms':>9} {'x default':>9}"
    )
    for name in models:
        for label in shapes:
            for clients in concurrency:
                for variant in variants:
                    cell = f"{name}_{variant}_{label}_c{clients}"
                    if f"{cell}_samples_per_s" not in results:
                        continue
                    ratio = results.get(f"{name}_{variant}_vs_default_{label}_c{clients}", 1.0) or float(
                        "nan"
                    )
                    print(
                        f"{name:<8} {label:<11} {clients:>4} {variant:<8} {results[f'{cell}_samples_per_s']:>10.2f} "
                        f"{results[f'{cell}_p50_ms']:>9.1f} {results[f'{cell}_p99_ms']:>9.1f} {ratio:>9.2f}"
                    )
    print(
        f"load average before {results.get('load_average_1m_before')}, after {results.get('load_average_1m_after')}"
    )
