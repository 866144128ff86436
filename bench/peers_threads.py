"""Why deploybench's artifacts ran slower at two threads than at one on this host (bench/results/peers.json).

The artifacts that ``bench/peers.py build DIR`` wrote go through this checkout's ``code/inference.py``
(``input_fn`` -> ``predict_fn``, texts in, normalised vectors out), with the session behind ``predict_fn``
swapped per variant: onnxruntime at 1 thread, and at 2 threads with its thread pool spinning
(``session.intra_op.allow_spinning`` 1, onnxruntime's default) or blocking (0); OpenVINO at 1 and 2
threads (``INFERENCE_NUM_THREADS``), its threads pinned to cores (``ENABLE_CPU_PINNING``, its default on
Linux) or not. Two ways of calling them, in one process:

* ``alone``: each variant called back to back (``--block`` calls), as an endpoint's one worker calls
  its one session;
* ``rotated``: one call of each variant in turn, the order rotated each round, as peers.py calls them:
  a variant then starts while the previous one's pool may still be spinning.

Each runs twice, in child processes, at ``nice`` 0 and at ``--nice`` (the niceness of the other work
on this shared host), so that a slowdown that is only contention for the cores shows as such. Each
figure is a median with its 95% interval (order statistics) and its sample count; the load average
is recorded before and after each child.

Usage: .venv/bin/python bench/peers_threads.py .peers-work [--rounds 30] [--block 5] [--nice 10]
Writes bench/results/peers_threads.json (flat).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "peers_threads.json"
SERVING_CODE = ROOT / "artifacts" / "code" / "inference.py"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers_timing import cpu_flags, cpu_model, median_interval, rotated_samples  # noqa: E402

SHAPE = "b1_natural"
# variant: (artifact under DIR, runtime, threads, onnxruntime's allow_spinning or OpenVINO's
# ENABLE_CPU_PINNING; 1 is each runtime's default)
VARIANTS = {
    "fp32_t1": ("artifact-deploybench_fp32", "onnxruntime", 1, 1),
    "fp32_t2_spin": ("artifact-deploybench_fp32", "onnxruntime", 2, 1),
    "fp32_t2_nospin": ("artifact-deploybench_fp32", "onnxruntime", 2, 0),
    "int8_t1": ("artifact-deploybench_int8", "onnxruntime", 1, 1),
    "int8_t2_spin": ("artifact-deploybench_int8", "onnxruntime", 2, 1),
    "int8_t2_nospin": ("artifact-deploybench_int8", "onnxruntime", 2, 0),
    "openvino_t1_pinned": ("artifact-deploybench_openvino", "openvino", 1, 1),
    "openvino_t1_unpinned": ("artifact-deploybench_openvino", "openvino", 1, 0),
    "openvino_t2_pinned": ("artifact-deploybench_openvino", "openvino", 2, 1),
    "openvino_t2_unpinned": ("artifact-deploybench_openvino", "openvino", 2, 0),
}


def _serving_code(artifact: Path) -> Any:
    """This checkout's code/inference.py (the artifact's copy may be older)."""
    spec = importlib.util.spec_from_file_location(f"inference_{artifact.name}", SERVING_CODE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def encoders(workdir: Path) -> dict[str, Callable[[list[str]], Any]]:
    """Every variant's encode(texts), through the artifact's predict_fn with the variant's session."""
    import onnxruntime as ort

    loaded: dict[str, Any] = {}
    out = {}
    for name, (folder, runtime, threads, setting) in VARIANTS.items():
        artifact = workdir / folder
        if folder not in loaded:
            module = _serving_code(artifact)
            loaded[folder] = (module, module.model_fn(str(artifact)))
        module, base = loaded[folder]
        onnx_path = str(artifact / base["onnx_file"])
        if runtime == "openvino":
            session: Any = module.OPENVINO.OpenVinoSession(onnx_path, threads, pinning=bool(setting))
        else:
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.add_session_config_entry("session.intra_op.allow_spinning", str(setting))
            session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
        model = {**base, "session": session}

        def encode(texts: list[str], module: Any = module, model: Any = model) -> Any:
            body = json.dumps({"inputs": texts, "parameters": {"batch_size": len(texts)}})
            return module.predict_fn(module.input_fn(body, "application/json"), model)

        out[name] = encode
    return out


def blocked_samples(
    variants: dict[str, Callable[[list[str]], Any]], batch: list[str], rounds: int, block: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Milliseconds of each variant called ``block`` times back to back, the variants' order rotated;
    and the process's CPU milliseconds per call over each block (all its threads: a spinning pool's
    waiting shows there)."""
    names = list(variants)
    samples: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for index in range(rounds):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            variants[name](batch)  # the first call after another variant is the rotated mode's
            cpu_started = time.process_time()
            for _ in range(block):
                started = time.perf_counter()
                variants[name](batch)
                samples[name].append((time.perf_counter() - started) * 1000)
            cpu[name].append((time.process_time() - cpu_started) * 1000 / block)
    return samples, cpu


def child(workdir: Path, rounds: int, block: int) -> None:
    """One niceness: both modes, every variant; prints one JSON object."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    batch = json.loads((workdir / "texts.json").read_text(encoding="utf-8"))[SHAPE]
    variants = encoders(workdir)
    for encode in variants.values():
        encode(batch)
    figures: dict[str, Any] = {"load_average_1m_before": round(os.getloadavg()[0], 2)}
    alone, cpu = blocked_samples(variants, batch, rounds, block)
    for name, values in cpu.items():
        figures[f"alone_{name}_cpu_ms_per_call"] = round(median_interval(values)[0], 3)
    for mode, samples in (("alone", alone), ("rotated", rotated_samples(variants, batch, rounds * block))):
        for name, values in samples.items():
            median, low, high = median_interval(values)
            figures[f"{mode}_{name}_ms"] = round(median, 3)
            figures[f"{mode}_{name}_ms_low"] = round(low, 3)
            figures[f"{mode}_{name}_ms_high"] = round(high, 3)
            figures[f"{mode}_{name}_n"] = len(values)
    figures["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--block", type=int, default=5)
    parser.add_argument("--nice", type=int, default=10, help="the second child's niceness")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        child(arguments.workdir, arguments.rounds, arguments.block)
        return
    figures: dict[str, Any] = {
        "model": "all-MiniLM-L6-v2",
        "shape": SHAPE,
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_flags": ",".join(cpu_flags()),
        "own_nice": os.nice(0),
        "interval": "median, 95% order-statistic interval",
    }
    command = [sys.executable, __file__, str(arguments.workdir), "--child"]
    command += ["--rounds", str(arguments.rounds), "--block", str(arguments.block)]
    for niceness in (0, arguments.nice):
        done = subprocess.run(
            ["nice", "-n", str(niceness), *command], check=True, capture_output=True, text=True
        )
        measured = json.loads(done.stdout.strip().splitlines()[-1])
        figures.update({f"nice{niceness}_{key}": value for key, value in measured.items()})
    print(f"{SHAPE}, ms median [95% interval]; CPU {figures['cpu_model']} ({figures['cpu_count']} cores)")
    modes = [f"{m} nice {n}" for n in (0, arguments.nice) for m in ("alone", "rotated")]
    print(f"| variant | {' | '.join(modes)} | CPU ms per call, alone, nice 0 / {arguments.nice} |")
    print("|---|---|---|---|---|---|")
    for name in VARIANTS:
        cells = [
            f"{figures[f'nice{n}_{m}_{name}_ms']:.2f} [{figures[f'nice{n}_{m}_{name}_ms_low']:.2f}, "
            f"{figures[f'nice{n}_{m}_{name}_ms_high']:.2f}]"
            for n in (0, arguments.nice)
            for m in ("alone", "rotated")
        ]
        cpu_cells = " / ".join(
            f"{figures[f'nice{n}_alone_{name}_cpu_ms_per_call']:.2f}" for n in (0, arguments.nice)
        )
        print(f"| {name} | {' | '.join(cells)} | {cpu_cells} |")
    for n in (0, arguments.nice):
        print(
            f"nice {n}: load {figures[f'nice{n}_load_average_1m_before']} -> {figures[f'nice{n}_load_average_1m_after']}, "
            f"n {figures[f'nice{n}_alone_fp32_t1_n']} per cell"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
