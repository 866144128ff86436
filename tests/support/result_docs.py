"""Result documents as the pipeline and `deploybench bench` write them (schema 2), for tests:
measurements with their windows and latency samples, drawn around a chosen median."""

from __future__ import annotations

from typing import Any

import numpy as np

from workflows.reports.cost import run_cost


def measurement(
    p50: float,
    *,
    batch: int = 1,
    sequence: int | str = "natural",
    concurrency: int = 1,
    samples: int = 600,
    spread: float = 0.02,
    stable: bool = True,
    seed: int = 0,
) -> dict[str, Any]:
    """A measurement as the engine writes it, with latencies drawn around ``p50``."""
    rng = np.random.default_rng(seed)
    latencies = np.abs(rng.normal(p50, p50 * spread, samples))
    rps = 1000 / p50 * concurrency
    windows = [
        {
            "requests": samples // 3,
            "errors": 0,
            "requests_per_s": rps * f,
            "p50_ms": p50 * f,
            "mean_ms": p50 * f,
        }
        for f in (0.99, 1.0, 1.01)
    ]
    return {
        "batch_size": batch,
        "sequence_length": sequence,
        "concurrency": concurrency,
        "requests": samples,
        "errors": 0,
        "errors_by_kind": {},
        "retries": 0,
        "duration_s": samples / rps,
        "p50_ms": float(np.median(latencies)),
        "p90_ms": float(np.percentile(latencies, 90)),
        "p99_ms": float(np.percentile(latencies, 99)),
        "max_ms": float(latencies.max()),
        "mean_ms": float(latencies.mean()),
        "std_ms": float(latencies.std()),
        "samples_per_s": rps * batch,
        "requests_per_s": rps,
        "stable": stable,
        "windows": windows,
        "kept_windows": 3,
        "started_at": 1_800_000_000.0,
        "ended_at": 1_800_000_030.0,
        "latencies_ms": [round(float(v), 3) for v in latencies],
    }


def result(run_id: str, measurements: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    data = {
        "schema_version": 2,
        "kind": "bench",
        "status": "SUCCEEDED",
        "run_id": run_id,
        "hosting": {"mode": "realtime", "instance_type": "ml.c6i.xlarge", "instance_count": 1},
        "endpoint_lifetime": {
            "start": "2026-11-29T10:00:00+00:00",
            "end": "2026-11-29T10:30:00+00:00",
            "note": "",
        },
        "measurements": measurements,
        "client": {"runner": "cli"},
    }
    data.update(extra)
    data["cost"] = run_cost(data)
    return data
