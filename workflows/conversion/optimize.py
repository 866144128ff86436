"""Offline graph fusion, kept only when it is correct and not slower than the plain export.

Measured on an AVX2 host at one thread: a plain export, which onnxruntime fuses at session load
(LayerNorm, BiasGelu, FusedMatMul), ran as fast as the offline-fused BERT graph (Attention,
SkipLayerNorm, EmbedLayerNorm), and often 3-8% faster; both were 2.3-3x faster than PyTorch at
batch 1. Offline fusion is therefore not assumed to help: in ``auto`` mode the fused graph must
pass the parity gate and must not be measurably slower than the plain one on the build host, or
the plain export is shipped (with the figures in the manifest either way).
"""

from __future__ import annotations

import contextlib
import io
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workflows.conversion.bounded import BoundedRun
from workflows.conversion.families import Family

# A fused graph up to 5% slower than the plain one is kept (fusion helps on some CPUs and costs
# nothing here); beyond that the plain export wins. Run-to-run noise on a shared host is ~5-8%.
SLOWER_MARGIN = 0.05
TIMING_BUDGET_S = 4.0
MIN_ROUNDS = 3
MAX_ROUNDS = 30
FUSED_OPS = (
    "Attention",
    "MultiHeadAttention",
    "EmbedLayerNormalization",
    "SkipLayerNormalization",
    "BiasGelu",
    "FastGelu",
    "Gelu",
)


@dataclass
class Fp32Choice:
    """The fp32 graph to ship and why."""

    path: Path
    summary: str
    warnings: list[str] = field(default_factory=list)
    timings_ms: dict[str, dict[str, float]] = field(default_factory=dict)


def op_counts(path: Path) -> Counter[str]:
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    return Counter(node.op_type for node in model.graph.node)


def fuse_graph(source: str, target: str, rules: str, num_heads: int, hidden_size: int) -> dict[str, Any]:
    """onnxruntime.transformers fusion at opt_level 1 (runs in a bounded child process).

    opt_level 1 keeps the graph hardware-independent: above 2, onnxruntime warns that the saved
    graph may hold optimisations specific to the build host's CPU.
    """
    from onnxruntime.transformers import optimizer

    with contextlib.redirect_stdout(io.StringIO()):
        optimized = optimizer.optimize_model(
            source, model_type=rules, num_heads=num_heads, hidden_size=hidden_size, opt_level=1
        )
    optimized.save_model_to_file(target)
    fused = optimized.get_fused_operator_statistics() or {}
    return {"target": target, "fused": {k: int(v) for k, v in fused.items() if v}}


def time_graphs(
    paths: dict[str, Path], shapes: dict[str, dict[str, np.ndarray]], *, budget_s: float = TIMING_BUDGET_S
) -> dict[str, dict[str, float]]:
    """Median milliseconds of each graph at each shape, one intra-op thread, rounds interleaved.

    Interleaving spreads a noisy neighbour over every graph alike; the rounds stop at the budget
    or at ``MAX_ROUNDS`` (at least ``MIN_ROUNDS``).
    """
    from workflows.conversion.parity import feed_for, ort_session

    sessions = {name: ort_session(path, threads=1) for name, path in paths.items()}
    feeds = {
        (name, shape): feed_for(session, batch)
        for name, session in sessions.items()
        for shape, batch in shapes.items()
    }
    for (name, _), feed in feeds.items():
        sessions[name].run(None, feed)
    samples: dict[tuple[str, str], list[float]] = {key: [] for key in feeds}
    started = time.perf_counter()
    rounds = 0
    while rounds < MIN_ROUNDS or (rounds < MAX_ROUNDS and time.perf_counter() - started < budget_s):
        for (name, shape), feed in feeds.items():
            begin = time.perf_counter()
            sessions[name].run(None, feed)
            samples[(name, shape)].append((time.perf_counter() - begin) * 1000)
        rounds += 1
    result: dict[str, dict[str, float]] = {name: {} for name in paths}
    for (name, shape), values in samples.items():
        result[name][shape] = round(statistics.median(values), 3)
    return result


def slowdown(timings: dict[str, dict[str, float]], candidate: str, baseline: str) -> float:
    """Geometric mean over shapes of candidate/baseline time, minus 1 (0.05 = 5% slower)."""
    ratios = [timings[candidate][s] / timings[baseline][s] for s in timings[baseline]]
    return float(np.exp(np.mean(np.log(ratios))) - 1)


def _describe(fused: dict[str, int]) -> str:
    return ", ".join(f"{k}×{v}" for k, v in sorted(fused.items())) or "nothing fused"


def _timing_text(timings: dict[str, dict[str, float]]) -> str:
    return "; ".join(
        f"{shape}: fused {timings['fused'][shape]:.2f} ms vs plain {timings['plain'][shape]:.2f} ms"
        for shape in timings["plain"]
    )


def start_fusion(
    mode: str,
    family: Family,
    config: dict[str, Any],
    plain: Path,
    target: Path,
    *,
    timeout_s: float,
    memory_gib: float,
) -> BoundedRun | None:
    """Start the family's fusion pass in a bounded child (it runs while the parity reference is
    computed); None when there is nothing to fuse."""
    if mode == "none" or family.fusion is None:
        return None
    arguments = {
        "source": str(plain),
        "target": str(target),
        "rules": family.fusion,
        "num_heads": int(config.get("num_attention_heads", 0)),
        "hidden_size": int(config.get("hidden_size", 0)),
    }
    return BoundedRun("fuse", arguments, timeout_s=timeout_s, memory_gib=memory_gib)


def choose_fp32(
    *,
    mode: str,
    family: Family,
    plain: Path,
    fusion: BoundedRun | None,
    parity_ok: Callable[[Path], tuple[bool, str]],
    timing_shapes: dict[str, dict[str, np.ndarray]],
) -> Fp32Choice:
    """Pick the fp32 graph: the plain export, or the fused one when it is verified.

    Args:
        mode: 'auto' (fused when correct and not slower), 'fused' (when correct), 'none'.
        fusion: the started fusion pass (``start_fusion``), None when there is none.
        parity_ok: callable(path) -> (passed, detail); the parity gate applied to the fused graph.
        timing_shapes: name -> padded batch, for the build-host timing in 'auto' mode.
    """
    if mode == "none":
        return Fp32Choice(plain, "none (convert.optimize is 'none'); onnxruntime fuses at session load")
    if family.fusion is None or fusion is None:
        return Fp32Choice(plain, f"none for {family.name}: {family.why_no_fusion}")
    outcome = fusion.wait()
    if not outcome.ok:
        warning = f"the {family.fusion} fusion pass {outcome.reason}; shipping the unoptimised export (F34)"
        return Fp32Choice(plain, f"none: {warning}", [warning])
    fused_path = Path(outcome.result["target"])
    rules = f"onnxruntime.transformers {family.fusion} opt_level 1 ({_describe(outcome.result['fused'])})"
    correct, detail = parity_ok(fused_path)
    if not correct:
        warning = f"the fused graph failed the parity gate ({detail}); shipping the unoptimised export"
        return Fp32Choice(plain, f"none: {warning}", [warning])
    if mode == "fused":
        return Fp32Choice(fused_path, f"{rules}: kept (convert.optimize is 'fused')")
    timings = time_graphs({"plain": plain, "fused": fused_path}, timing_shapes)
    change = slowdown(timings, "fused", "plain")
    measured = f"1-thread A/B on the build host, {_timing_text(timings)}"
    if change > SLOWER_MARGIN:
        return Fp32Choice(
            plain,
            f"plain export kept: {rules} was {change:+.0%} slower ({measured}); onnxruntime fuses at load",
            timings_ms=timings,
        )
    return Fp32Choice(fused_path, f"{rules}: kept, {change:+.0%} vs plain ({measured})", timings_ms=timings)
