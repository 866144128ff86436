"""Helpers of bench/served_vs_default.py: pooling the default's token vectors, reading what MMS refused."""

from __future__ import annotations

import re
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
