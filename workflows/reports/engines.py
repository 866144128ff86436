"""TensorRT engine builds per shape, reported apart from warm latency (F21)."""

from __future__ import annotations

from typing import Any

from workflows.reports.tables import table


def engine_build_lines(result: dict[str, Any]) -> list[str]:
    """A table of each shape's first call (the engine build included) beside its warm latency.

    TensorRT builds one engine per shape on its first call; the warmup sends that call before any
    measurement, so the build time is the time to the shape's first success less one warm call.
    """
    manifest = (result.get("convert") or {}).get("manifest") or {}
    if (manifest.get("serving") or {}).get("engine") != "tensorrt":
        return []
    shapes = (result.get("warmup") or {}).get("shapes") or []
    rows = []
    for w in shapes:
        first_s, warm_ms = w.get("time_to_first_success_s"), w.get("last_ms")
        build_s = (
            None if first_s is None or warm_ms is None else round(max(0.0, first_s - warm_ms / 1000.0), 3)
        )
        rows.append(
            [
                f"b{w['batch_size']}/{w['sequence_length']}",
                w["first_ms"],
                w.get("first_error"),
                first_s,
                build_s,
                warm_ms,
            ]
        )
    if not rows:
        return []
    return [
        "",
        "## TensorRT engine builds",
        "",
        "Each shape's engine is built on its first call, during the warmup; the warm figures below exclude it.",
        "",
        *table(["shape", "first call ms", "first error", "1st success s", "build s (≈)", "warm ms"], rows),
    ]
