"""The sweep's plots, drawn where the sweep's files land (the CLI), from its summary.json.

- p99 against throughput (samples/s), one line per instance type and mode through its
  concurrency levels, each p99 with its 95% interval (an arrow up where n gives no upper bound);
- USD per 1M inferences against p99, one marker per run and concurrency, with the target line.

The sweep's CompareWithBaseline Lambda has no matplotlib; the CLI draws these after it downloads
the sweep's folder, on AWS and locally alike. Series differ by marker and line style as well as
colour. A local sweep's plots say so on the figure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from workflows.reports.plots import LINES, MARKERS

P99_VS_THROUGHPUT_PNG = "p99_vs_throughput.png"
COST_VS_P99_PNG = "cost_vs_p99.png"
LOCAL_NOTE = "LOCAL sweep: every run measured on this host's shared CPUs, not on the types named"


def _series(points: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    series: dict[str, list[dict[str, Any]]] = {}
    for point in points:
        if point.get("p99_ms") is None:
            continue
        series.setdefault(f"{point['instance_type']} {point['mode']}", []).append(point)
    return {name: sorted(rows, key=lambda p: p["samples_per_s"]) for name, rows in series.items()}


def _save(figure: Figure, path: Path, title: str, local: bool) -> Path:
    FigureCanvasAgg(figure)
    if local:
        figure.suptitle(LOCAL_NOTE, fontsize=8, color="firebrick", wrap=True)
    figure.tight_layout()
    figure.savefig(path, dpi=110, metadata={"Title": title, "Description": LOCAL_NOTE if local else "AWS"})
    return path


def p99_vs_throughput(recommendation: dict[str, Any], path: Path) -> Path | None:
    """p99 against samples/s per instance type, with each p99's 95% interval as an error bar."""
    series = _series(recommendation.get("points") or [])
    if not series:
        return None
    figure = Figure(figsize=(6.5, 4.6))
    axis = figure.subplots()
    for index, (name, rows) in enumerate(series.items()):
        x = [p["samples_per_s"] for p in rows]
        y = [p["p99_ms"] for p in rows]
        low = [max(0.0, p["p99_ms"] - ((p.get("p99_ci_ms") or [None, None])[0] or p["p99_ms"])) for p in rows]
        high = [((p.get("p99_ci_ms") or [None, None])[1] or p["p99_ms"]) - p["p99_ms"] for p in rows]
        line = axis.errorbar(
            x,
            y,
            yerr=[low, high],
            linestyle=LINES[index % len(LINES)],
            marker=MARKERS[index % len(MARKERS)],
            capsize=3,
            label=name,
        )
        for p in rows:
            if not (p.get("p99_ci_ms") or [None, None])[1]:
                # No upper bound from this n: the arrow says the true p99 may lie anywhere above.
                axis.annotate(
                    "",
                    xy=(p["samples_per_s"], p["p99_ms"] * 1.25),
                    xytext=(p["samples_per_s"], p["p99_ms"]),
                    arrowprops={"arrowstyle": "->", "color": line[0].get_color()},
                )
    target = recommendation.get("policy", {}).get("p99_ms")
    if target:
        axis.axhline(target, color="black", linestyle="-.", linewidth=1, label=f"target {target:g} ms")
    batch = recommendation.get("policy", {}).get("batch_size")
    axis.set(
        xlabel="throughput (samples/s)",
        ylabel="p99 latency (ms); 95% interval, ↑ unbounded",
        title=f"p99 vs throughput, batch {batch}, one point per concurrency",
    )
    axis.legend(fontsize=8)
    axis.grid(alpha=0.3)
    return _save(figure, path, "p99 vs throughput", bool(recommendation.get("local")))


def cost_vs_p99(recommendation: dict[str, Any], path: Path) -> Path | None:
    """USD per 1M inferences against p99, one marker per type, with the p99 target as a line."""
    series = _series(recommendation.get("points") or [])
    priced = {n: [p for p in rows if p.get("cost_per_million") is not None] for n, rows in series.items()}
    priced = {n: rows for n, rows in priced.items() if rows}
    if not priced:
        return None
    figure = Figure(figsize=(6.5, 4.6))
    axis = figure.subplots()
    for index, (name, rows) in enumerate(priced.items()):
        axis.plot(
            [p["p99_ms"] for p in rows],
            [p["cost_per_million"] for p in rows],
            linestyle="none",
            marker=MARKERS[index % len(MARKERS)],
            markersize=8,
            label=name,
        )
        for p in rows:
            axis.annotate(
                f"c{p['concurrency']}",
                (p["p99_ms"], p["cost_per_million"]),
                fontsize=7,
                xytext=(4, 4),
                textcoords="offset points",
            )
    target = recommendation.get("policy", {}).get("p99_ms")
    if target:
        axis.axvline(target, color="black", linestyle="-.", linewidth=1, label=f"p99 target {target:g} ms")
    axis.set(xlabel="p99 latency (ms)", ylabel="USD per 1M inferences", title="Cost per 1M inferences vs p99")
    axis.legend(fontsize=8)
    axis.grid(alpha=0.3)
    return _save(figure, path, "cost per 1M vs p99", bool(recommendation.get("local")))


def write_sweep_plots(summary: dict[str, Any], folder: Path) -> dict[str, str]:
    """Both plots into ``folder/plots/``; returns title → path relative to ``folder``."""
    recommendation = summary.get("recommendation")
    if not recommendation:
        return {}
    plots = folder / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    drawn = {
        "p99 against throughput per instance type": p99_vs_throughput(
            recommendation, plots / P99_VS_THROUGHPUT_PNG
        ),
        "USD per 1M inferences against p99, with the target": cost_vs_p99(
            recommendation, plots / COST_VS_P99_PNG
        ),
    }
    return {title: str(path.relative_to(folder)) for title, path in drawn.items() if path is not None}


def plots_section(plots: dict[str, str]) -> str:
    """The report's Markdown for the plots."""
    if not plots:
        return ""
    return "\n## Plots\n\n" + "".join(f"![{title}]({file})\n\n" for title, file in plots.items())
