"""PNG plots of one or several results (matplotlib's Agg canvas: no display, no global state).

- latency percentiles vs batch size, one panel per sequence length (lowest concurrency measured);
- throughput (samples/s) vs concurrency, one line per shape (drawn only when more than one
  concurrency was measured: one point is not a curve);
- cost per 1M inferences per shape, one bar per result (instance type and mode).

Every series differs by line style, marker or hatch as well as colour, so a greyscale print or a
reader who does not tell colours apart can still read it. A plot of a local result carries the
local label on the figure and in the PNG's ``Description``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from workflows.reports.venue import banner, is_local

# (field, line style, marker, name): each percentile is told apart by line and marker, not colour.
PERCENTILES = (("p50_ms", "-", "o", "p50"), ("p90_ms", "--", "s", "p90"), ("p99_ms", ":", "^", "p99"))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINES = ("-", "--", ":", "-.")
HATCHES = ("", "//", "..", "xx", "\\\\", "++", "oo", "--")
LATENCY_PNG = "latency_vs_batch.png"
THROUGHPUT_PNG = "throughput_vs_concurrency.png"
COST_PNG = "cost_per_million.png"


def label(result: dict[str, Any]) -> str:
    hosting = result.get("hosting") or {}
    where = ", local" if is_local(result) else ""
    return f"{result.get('run_id', '?')} ({hosting.get('mode', '?')}, {hosting.get('instance_type') or '-'}{where})"


def _where(result: dict[str, Any]) -> str:
    """Instance type and mode: what a reader compares across results."""
    hosting = result.get("hosting") or {}
    where = hosting.get("instance_type") or f"{hosting.get('memory_size_mb') or '?'} MB"
    return f"{where} {hosting.get('mode', '?')}" + (" (local)" if is_local(result) else "")


def _save(figure: Figure, path: Path, results: list[dict[str, Any]], title: str) -> Path:
    FigureCanvasAgg(figure)
    local = banner(results)
    if local:
        figure.suptitle(local, fontsize=8, color="firebrick", wrap=True)
    figure.tight_layout()
    figure.savefig(path, dpi=110, metadata={"Title": title, "Description": local or "measured on AWS"})
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
    figure = Figure(figsize=(5.5 * len(sequences), 4.4))
    axes = figure.subplots(1, len(sequences), squeeze=False)[0]
    for axis, sequence in zip(axes, sequences, strict=True):
        for index, result in enumerate(results):
            rows = [m for m in result.get("measurements") or [] if str(m["sequence_length"]) == sequence]
            if not rows:
                continue
            lowest = min(m["concurrency"] for m in rows)
            rows = sorted((m for m in rows if m["concurrency"] == lowest), key=lambda m: m["batch_size"])
            for field, style, marker, name in PERCENTILES:
                points = [(m["batch_size"], m[field]) for m in rows if m.get(field) is not None]
                if points:
                    axis.plot(
                        *zip(*points, strict=True),
                        style,
                        marker=marker,
                        markerfacecolor="none" if index % 2 else None,
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
    return _save(figure, path, results, "latency percentiles vs batch size")


def throughput_vs_concurrency(results: list[dict[str, Any]], path: Path) -> Path | None:
    """None unless some shape was measured at two concurrencies or more."""
    figure = Figure(figsize=(7, 4.7))
    axis = figure.add_subplot()
    drawn = 0
    for index, result in enumerate(results):
        shapes: dict[tuple[int, str], list[tuple[int, float]]] = {}
        for m in result.get("measurements") or []:
            shapes.setdefault((m["batch_size"], str(m["sequence_length"])), []).append(
                (m["concurrency"], m["samples_per_s"])
            )
        for number, ((batch, sequence), points) in enumerate(sorted(shapes.items())):
            if len(points) < 2:
                continue
            points.sort()
            series = index * len(shapes) + number
            name = f"b{batch}/{sequence}" + (f" {label(result)}" if len(results) > 1 else "")
            axis.plot(
                *zip(*points, strict=True),
                LINES[series % len(LINES)],
                marker=MARKERS[series % len(MARKERS)],
                color=f"C{series % 10}",
                label=name,
            )
            drawn += 1
    if not drawn:
        return None
    axis.set_xticks(sorted({m["concurrency"] for r in results for m in r.get("measurements") or []}))
    axis.set_xlabel("concurrent clients")
    axis.set_ylabel("samples/s")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=7)
    return _save(figure, path, results, "throughput vs concurrency")


def _cost_rows(result: dict[str, Any]) -> dict[str, float]:
    """{shape and concurrency: USD per 1M} of every measurement that has a cost."""
    return {
        f"b{r['batch_size']}/{r['sequence_length']} c{r['concurrency']}": r["cost_per_million"]
        for r in (result.get("cost") or {}).get("per_million_inferences", [])
        if r.get("cost_per_million")
    }


def cost_per_million(results: list[dict[str, Any]], path: Path) -> Path | None:
    """Grouped bars: one group per measured shape, one bar (hatch and colour) per result."""
    per_result = [(_where(r), _cost_rows(r)) for r in results]
    shapes: list[str] = []
    for _, rows in per_result:
        shapes += [s for s in rows if s not in shapes]
    if not shapes:
        return None
    width = 0.8 / len(per_result)
    figure = Figure(figsize=(max(6.0, 0.9 * len(shapes) * max(1, len(per_result)) + 2.5), 4.9))
    axis = figure.add_subplot()
    for index, (where, rows) in enumerate(per_result):
        positions = [s + index * width - 0.4 + width / 2 for s in range(len(shapes))]
        values = [rows.get(shape, 0.0) for shape in shapes]
        bars = axis.bar(
            positions,
            values,
            width,
            color=f"C{index % 10}",
            hatch=HATCHES[index % len(HATCHES)],
            edgecolor="black",
            label=where if len(results) == 1 else f"[{index}] {where}",
        )
        for bar, value in zip(bars, values, strict=True):
            if value:
                axis.annotate(
                    f"${value:.3g}",
                    (bar.get_x() + bar.get_width() / 2, value),
                    ha="center",
                    va="bottom",
                    fontsize=7,
                )
    axis.set_xticks(list(range(len(shapes))), shapes, fontsize=8, rotation=20)
    axis.set_xlabel("shape (batch/sequence, concurrent clients)")
    axis.set_ylabel("USD per 1M inferences (serving, fully busy)")
    axis.set_title("cost per 1M inferences, per shape and instance type")
    axis.grid(axis="y", alpha=0.3)
    axis.legend(fontsize=7)
    return _save(figure, path, results, "cost per 1M inferences")


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
