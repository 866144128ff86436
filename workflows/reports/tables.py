"""Markdown tables shared by the reports: cell formatting, and the verdict columns that
``deploybench report`` and a sweep's report both render from ``workflows.reports.compare`` rows.
(No plotting here: the sweep's comparison imports this without matplotlib.)"""

from __future__ import annotations

from typing import Any

import numpy as np

from workflows.benchmark.stats import percentile_intervals


def fmt(value: Any, digits: int = 2) -> str:
    """A cell for people: '-' for nothing, floats to ``digits`` (small ones to 3 significant)."""
    if value is None:
        return "-"
    if isinstance(value, float):
        # Small quantities (instance-hours of a short run, unit prices) keep significant digits.
        return f"{value:.3g}" if value and abs(value) < 0.1 else f"{value:.{digits}f}"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items()) or "-"
    return str(value)


def table(header: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown table: ``header`` and one line per row, each cell formatted for people."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(cell) for cell in row) + " |" for row in rows]
    return lines


VERDICT_HEADER = [
    "verdict",
    "latency",
    "median change",
    "CI95 of the median diff (ms)",
    "latency noise",
    "throughput",
    "mean req/s change",
    "throughput noise",
]


def _pct(value: float | None, sign: str = "+") -> str:
    return "-" if value is None else f"{value * 100:{sign}.1f}%"


def verdict_cells(row: dict[str, Any]) -> list[str]:
    """The cells under ``VERDICT_HEADER`` for one row of ``workflows.reports.compare.compare``.

    A "no verdict" names its reason once (latency and throughput share it); the noise columns
    show the floor a change had to clear when a practical minimum raised it above the noise.
    """
    latency, throughput = row["latency"], row["throughput"]
    interval = latency.get("diff_ms_ci95")

    def called(part: dict[str, Any], shown: str | None = None) -> str:
        reason = part.get("reason")
        if part.get("n_to_separate"):
            reason = f"{reason}: n {'/'.join(str(n) for n in part.get('n') or [])}; about {part['n_to_separate']} samples each would separate them"
        return part["verdict"] + (f" ({reason})" if reason and reason != shown else "")

    def floor(part: dict[str, Any]) -> str:
        noise, minimum = part.get("noise"), part.get("min_change") or 0.0
        if noise is None:
            return "-"
        return _pct(noise, "") + (f" (min {_pct(minimum, '')})" if minimum > noise else "")

    return [
        f"**{row['verdict']}**",
        called(latency),
        _pct(latency.get("median_change")),
        f"{interval[0]:+.3f} .. {interval[1]:+.3f}" if interval else "-",
        floor(latency),
        called(throughput, latency.get("reason")),
        _pct(throughput.get("mean_change")),
        floor(throughput),
    ]


def samples_of(measurement: dict[str, Any]) -> int:
    """n of a measurement's percentiles: its successful requests in the kept windows."""
    return int(measurement.get("requests") or 0) - int(measurement.get("errors") or 0)


def interval_of(measurement: dict[str, Any], name: str) -> list[float | None] | None:
    """``[low, high]`` of percentile ``name`` (``p50``, ``p90``, ``p99``); None when unknown.

    Results written before intervals were recorded get theirs from the latency samples they keep
    (a subsample beyond 20,000, so at worst a wider interval); results without samples get none.
    """
    interval = measurement.get(f"{name}_ci_ms")
    if interval is not None:
        return list(interval)
    samples = measurement.get("latencies_ms")
    if not samples:
        return None
    return list(percentile_intervals(np.asarray(samples, dtype=float))[f"{name}_ci_ms"])


def percentile_cell(measurement: dict[str, Any], name: str, *, compact: bool = False) -> str:
    """``12.30 (11.90–12.80)``; a bound n cannot give reads "unbounded" (``602.00 (≥ 560.00, unbounded
    above)``). ``compact`` (a terminal's narrow table) writes intervals as ``602.00 [560.00, ∞)``."""
    value = measurement.get(f"{name}_ms")
    if value is None:
        return "-"
    interval = interval_of(measurement, name)
    if interval is None:
        return f"{fmt(value)} (no interval)"
    low, high = interval
    if compact:
        left = "(-∞" if low is None else f"[{fmt(low)}"
        right = "∞)" if high is None else f"{fmt(high)}]"
        return f"{fmt(value)} {left}, {right}"
    if low is None and high is None:
        return f"{fmt(value)} (unbounded)"
    if high is None:
        return f"{fmt(value)} (≥ {fmt(low)}, unbounded above)"
    if low is None:
        return f"{fmt(value)} (≤ {fmt(high)}, unbounded below)"
    return f"{fmt(value)} ({fmt(low)}–{fmt(high)})"


def stable_cell(measurement: dict[str, Any]) -> str:
    """``yes``, or ``no: <each part of the stopping rule missed>`` (the reason beside the figure)."""
    if measurement.get("stable"):
        return "yes"
    reason = measurement.get("unstable_reason") or measurement.get("stop_reason") or ""
    return f"no: {reason}" if reason else "no"
