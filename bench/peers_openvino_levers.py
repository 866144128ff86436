"""What OpenVINO's runtime settings change for the artifact ``precision: auto`` picks on a bf16 CPU (the fp32
graph on OpenVINO), at b8 x 128, side by side.

The graph is the one ``bench/peers.py build DIR`` converted with ``convert.engine: openvino``; ST's OpenVINO
IR (``DIR/model/openvino``, written by ``bench/peers.py measure``) runs beside it under the serving code's
settings, to tell the graph from the settings. Each variant changes one thing against the serving code's
compiled model (``PERFORMANCE_HINT`` LATENCY, ``INFERENCE_NUM_THREADS``, unpinned, dynamic shapes, the
plugin's own precision, inputs copied in):

* ``static_shapes``: the model reshaped to [8, 128] before compiling;
* ``throughput_hint``: ``PERFORMANCE_HINT`` THROUGHPUT with one stream (one request at a time);
* ``bf16_explicit``: ``INFERENCE_PRECISION_HINT`` bf16 asked for (the plugin's default where the CPU has it);
* ``shared_inputs``: ``infer(..., share_inputs=True)``: the feed's arrays used in place, not copied;
* ``st_ir``: ST's IR (optimum-intel's export) under the serving code's settings.

Graph calls only (tokenisation and the response are the same for all). Every variant once a round, the
order rotated; the ratio is the median of per-round ratios (base / variant, > 1: the variant is faster)
with its 95% interval. Usage: .venv/bin/python bench/peers_openvino_levers.py .peers-work [--rounds 12]
[--threads 1]. Writes bench/results/peers_openvino_levers.json (flat).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "peers_openvino_levers.json"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers_timing import cpu_flags, cpu_model, median_interval  # noqa: E402

BATCH, LENGTH = 8, 128


def variants(workdir: Path, threads: int) -> tuple[dict[str, Callable[[], Any]], dict[str, str]]:
    """Each variant's one call on a b8 x 128 feed, and the precision it computes in."""
    import numpy as np
    import openvino

    core = openvino.Core()
    ours = next((workdir / "artifact-deploybench_openvino").glob("*.onnx"))
    st_ir = workdir / "model" / "openvino" / "openvino_model.xml"
    ids = np.random.default_rng(0).integers(1000, 20000, (BATCH, LENGTH)).astype(np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    # The serving code's settings (code/deploybench_openvino.py).
    base = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": threads, "ENABLE_CPU_PINNING": False}
    plans: dict[str, tuple[Path, dict[str, Any], bool, bool]] = {
        "serving": (ours, {}, False, False),
        "static_shapes": (ours, {}, True, False),
        "throughput_hint": (ours, {"PERFORMANCE_HINT": "THROUGHPUT", "NUM_STREAMS": 1}, False, False),
        "bf16_explicit": (ours, {"INFERENCE_PRECISION_HINT": "bf16"}, False, False),
        "shared_inputs": (ours, {}, False, True),
    }
    if st_ir.is_file():
        plans["st_ir"] = (st_ir, {}, False, False)
    calls, precisions = {}, {}
    for name, (path, config, static, shared) in plans.items():
        model = core.read_model(path)
        if static:
            model.reshape({port.any_name: [BATCH, LENGTH] for port in model.inputs})
        compiled = core.compile_model(model, "CPU", {**base, **config})
        request = compiled.create_infer_request()
        own = {port.any_name: feed[port.any_name] for port in compiled.inputs}

        def call(request: Any = request, own: dict[str, Any] = own, shared: bool = shared) -> Any:
            request.infer(own, share_inputs=shared)
            return request.get_output_tensor(0).data.copy()

        calls[name] = call
        precisions[name] = compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()
    return calls, precisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--threads", type=int, default=1)
    arguments = parser.parse_args()
    calls, precisions = variants(arguments.workdir, arguments.threads)
    for call in calls.values():
        call()
    figures: dict[str, Any] = {
        "model": "all-MiniLM-L6-v2",
        "shape": f"b{BATCH}_seq{LENGTH}",
        "threads": arguments.threads,
        "cpu_model": cpu_model(),
        "cpu_flags": ",".join(cpu_flags()),
        "load_average_1m_before": round(os.getloadavg()[0], 2),
        "interval": "median, 95% order-statistic interval",
    }
    names = list(calls)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for index in range(arguments.rounds):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            started = time.perf_counter()
            calls[name]()
            samples[name].append((time.perf_counter() - started) * 1000)
    figures["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    print(
        f"b{BATCH} x {LENGTH}, {arguments.threads} thread(s), ms median [95% interval]; CPU {figures['cpu_model']}"
    )
    print("| variant | computes in | ms | serving / variant | n |")
    print("|---|---|---|---|---|")
    for name in names:
        median, low, high = median_interval(samples[name])
        ratio, ratio_low, ratio_high = median_interval(
            [base / mine for base, mine in zip(samples["serving"], samples[name], strict=True)]
        )
        figures.update(
            {
                f"{name}_computes_in": precisions[name],
                f"{name}_ms": round(median, 2),
                f"{name}_ms_low": round(low, 2),
                f"{name}_ms_high": round(high, 2),
                f"{name}_speedup": round(ratio, 3),
                f"{name}_speedup_low": round(ratio_low, 3),
                f"{name}_speedup_high": round(ratio_high, 3),
                f"{name}_n": len(samples[name]),
            }
        )
        print(
            f"| {name} | {precisions[name]} | {median:.1f} [{low:.1f}, {high:.1f}] | "
            f"{ratio:.3f} [{ratio_low:.3f}, {ratio_high:.3f}] | {len(samples[name])} |"
        )
    print(f"load {figures['load_average_1m_before']} -> {figures['load_average_1m_after']}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
