"""The README's first command, timed: the bundled default run end to end on the local engine.

Runs ``deploybench run examples/minilm-realtime.yaml --local`` (what ``make run`` runs, on the warm
cache ``make run`` leaves) as a user would, and records its wall time and, per measured shape, the
n of its kept windows, whether it was stable and whether p99 has a finite upper bound.

Targets (issue: the first run gives figures a user can act on): every shape stable, every p99
bounded, the run within 600 s on two cores.
Writes bench/results/default_run.json (flat). Usage: python bench/default_run.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from conversion_support import ROOT, machine, table, write_figures

SPEC = "examples/minilm-realtime.yaml"
TARGET_S = 600


def main() -> None:
    figures: dict[str, Any] = {**machine(), "spec": SPEC}
    figures.pop("threads")
    figures["load_average_1m_before"] = figures.pop("load_average_1m")
    figures["cpu_model"] = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        "unknown",
    )
    started = time.perf_counter()
    done = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "deploybench"), "run", SPEC, "--local", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    figures["wall_s"] = round(time.perf_counter() - started, 1)
    figures["exit_code"] = done.returncode
    if done.returncode != 0:
        raise SystemExit(f"the default run failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    printed = json.loads(done.stdout)
    [path] = [Path(p) for p in printed["results"] if p.endswith("result.json")]
    result = json.loads((path if path.is_absolute() else ROOT / path).read_text())
    figures["run_id"] = result["run_id"]
    rows = []
    measurements = result.get("measurements") or []
    for shape in measurements:
        name = f"b{shape['batch_size']}_{shape['sequence_length']}_c{shape['concurrency']}"
        upper = (shape.get("p99_ci_ms") or [None, None])[1]
        figures[f"{name}_n"] = shape["requests"]
        figures[f"{name}_stable"] = shape["stable"]
        figures[f"{name}_p50_ms"] = shape["p50_ms"]
        figures[f"{name}_p99_ms"] = shape["p99_ms"]
        figures[f"{name}_p99_upper_ms"] = upper
        rows.append(
            [
                name,
                str(shape["requests"]),
                "yes" if shape["stable"] else "no",
                f"{shape['p50_ms']}",
                f"{shape['p99_ms']}",
                f"{upper}",
            ]
        )
    figures["shapes"] = len(measurements)
    figures["shapes_stable"] = sum(1 for s in measurements if s["stable"])
    figures["shapes_p99_bounded"] = sum(
        1 for s in measurements if (s.get("p99_ci_ms") or [None, None])[1] is not None
    )
    figures["benchmark_s"] = (result.get("benchmark") or {}).get("seconds")
    figures["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    print(table(["shape", "n", "stable", "p50 ms", "p99 ms", "p99 upper ms"], rows))
    print(
        f"wall {figures['wall_s']} s (target ≤ {TARGET_S}); stable {figures['shapes_stable']}/{figures['shapes']}, "
        f"p99 bounded {figures['shapes_p99_bounded']}/{figures['shapes']}; CPU {figures['cpu_model']} "
        f"({figures['cpu_count']} CPUs, {figures['cpu_flags']})"
    )
    write_figures("default_run", figures)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
