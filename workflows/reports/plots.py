"""PNG plots of one or several results (matplotlib's Agg canvas: no display, no global state).

- latency percentiles vs batch size, one panel per sequence length (lowest concurrency measured);
- throughput (samples/s) vs concurrency, one line per shape;
- cost per 1M inferences by hosting mode (each result's cheapest measured shape).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

PERCENTILES = (("p50_ms", "-", "p50"), ("p90_ms", "--", "p90"), ("p99_ms", ":", "p99"))
LATENCY_PNG = "latency_vs_batch.png"
THROUGHPUT_PNG = "throughput_vs_concurrency.png"
COST_PNG = "cost_per_million.png"


def label(result: dict[str, Any]) -> str:
    hosting = result.get("hosting") or {}
    return f"{result.get('run_id', '?')} ({hosting.get('mode', '?')}, {hosting.get('instance_type') or '-'})"


def _save(figure: Figure, path: Path) -> Path:
    FigureCanvasAgg(figure)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return path


def _sequences(results: list[dict[str, Any]]) -> list[str]:
    seen: list[str] = []
    for result in results:
        for m in result.get("measurements") or []:
            if str(m["sequence_length"]) not in seen:
                seen.append(str(m["sequence_length"]))
    return seen


def latency_vs_batch(results: list[dict[str, Any]], path: Path) -> Path | None:
    sequences = _sequences(results)
    if not sequences:
        return None
    figure = Figure(figsize=(5.5 * len(sequences), 4.2))
    axes = figure.subplots(1, len(sequences), squeeze=False)[0]
    for axis, sequence in zip(axes, sequences, strict=True):
        for index, result in enumerate(results):
            rows = [m for m in result.get("measurements") or [] if str(m["sequence_length"]) == sequence]
            if not rows:
                continue
            lowest = min(m["concurrency"] for m in rows)
            rows = sorted((m for m in rows if m["concurrency"] == lowest), key=lambda m: m["batch_size"])
            for field, style, name in PERCENTILES:
                points = [(m["batch_size"], m[field]) for m in rows if m.get(field) is not None]
                if points:
                    axis.plot(
                        *zip(*points, strict=True),
                        style,
                        marker="o",
                        color=f"C{index}",
                        label=f"{name} {label(result)}" if len(results) > 1 else name,
                    )
        axis.set_xticks(sorted({m["batch_size"] for r in results for m in r.get("measurements") or []}))
        axis.set_title(f"sequence length {sequence}")
        axis.set_xlabel("batch size")
        axis.set_ylabel("client latency (ms)")
        axis.grid(alpha=0.3)
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize=7)
    if not any(axis.lines for axis in axes):
        return None  # no request succeeded: no latency to draw
    return _save(figure, path)


def throughput_vs_concurrency(results: list[dict[str, Any]], path: Path) -> Path | None:
    figure = Figure(figsize=(7, 4.5))
    axis = figure.add_subplot()
    drawn = False
    for index, result in enumerate(results):
        shapes: dict[tuple[int, str], list[tuple[int, float]]] = {}
        for m in result.get("measurements") or []:
            shapes.setdefault((m["batch_size"], str(m["sequence_length"])), []).append(
                (m["concurrency"], m["samples_per_s"])
            )
        for number, ((batch, sequence), points) in enumerate(sorted(shapes.items())):
            points.sort()
            name = f"b{batch}/{sequence}" + (f" {label(result)}" if len(results) > 1 else "")
            axis.plot(
                *zip(*points, strict=True), marker="o", color=f"C{(index * 5 + number) % 10}", label=name
            )
            drawn = True
    if not drawn:
        return None
    axis.set_xticks(sorted({m["concurrency"] for r in results for m in r.get("measurements") or []}))
    axis.set_xlabel("concurrent clients")
    axis.set_ylabel("samples/s")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=7)
    return _save(figure, path)


def cost_per_million(results: list[dict[str, Any]], path: Path) -> Path | None:
    bars = []
    for result in results:
        rows = [
            r for r in (result.get("cost") or {}).get("per_million_inferences", []) if r["cost_per_million"]
        ]
        if rows:
            best = min(rows, key=lambda r: r["cost_per_million"])
            shape = f"b{best['batch_size']}/{best['sequence_length']} c{best['concurrency']}"
            bars.append(
                (
                    f"{(result.get('hosting') or {}).get('mode', '?')}\n{shape}",
                    best["cost_per_million"],
                    label(result),
                )
            )
    if not bars:
        return None
    figure = Figure(figsize=(max(5.0, 1.6 * len(bars) + 2), 4.5))
    axis = figure.add_subplot()
    positions = range(len(bars))
    axis.bar(positions, [b[1] for b in bars], color=[f"C{i}" for i in positions])
    axis.set_xticks(list(positions), [b[0] for b in bars], fontsize=8)
    for position, (_, value, _) in zip(positions, bars, strict=True):
        axis.annotate(f"${value:.4g}", (position, value), ha="center", va="bottom", fontsize=8)
    axis.set_ylabel("USD per 1M inferences (serving, fully busy)")
    axis.set_title("cost per 1M inferences by hosting mode")
    axis.grid(axis="y", alpha=0.3)
    return _save(figure, path)


def write_plots(results: list[dict[str, Any]], out: Path) -> dict[str, str]:
    """Write every plot that has data into ``out``; returns {plot: file name}."""
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, file, plot in (
        ("latency", LATENCY_PNG, latency_vs_batch),
        ("throughput", THROUGHPUT_PNG, throughput_vs_concurrency),
        ("cost", COST_PNG, cost_per_million),
    ):
        if plot(results, out / file) is not None:
            written[name] = file
    return written
