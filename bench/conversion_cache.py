"""The conversion cache on the main job: the same local run twice, ConvertToOnnx timed each time.

Runs ``examples/minilm-realtime.yaml`` (the bundled MiniLM) on the local engine twice with an
empty cache folder, as ``deploybench run --local`` runs it (Waits 30x faster than real time), and records how long the run spent in
ConvertToOnnx each time, and whether the cache missed then hit. The endpoints are served by the
light server (the cache, not the serving stack, is measured) and the benchmark is cut to one shape.

Target: the second run spends at most 2 s in ConvertToOnnx.
Writes bench/results/conversion_cache.json (flat). Usage: python bench/conversion_cache.py
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from conversion_support import ROOT, machine, table, write_figures

SHORT_BENCHMARK = {
    "batch_sizes": [1],
    "sequence_lengths": ["natural"],
    "concurrency": [1],
    "min_duration_s": 0.5,
    "min_requests": 5,
    "max_duration_s": 2,
}


def main() -> None:
    import yaml

    from workflows.container.environment import SERVER_ENV
    from workflows.contracts import PipelineState
    from workflows.execution.pipeline import StateEvent, run_local
    from workflows.spec.pipeline import parse_spec

    figures: dict[str, Any] = {**machine()}
    figures["load_average_1m_before"] = figures.pop("load_average_1m")
    document = yaml.safe_load((ROOT / "examples" / "minilm-realtime.yaml").read_text())
    document["benchmark"] = {**document.get("benchmark", {}), **SHORT_BENCHMARK}
    spec = parse_spec(document)
    with tempfile.TemporaryDirectory(prefix="bench-conversion-cache-") as scratch:
        os.environ[SERVER_ENV] = "light"
        os.environ["DEPLOYBENCH_CONVERSION_CACHE"] = str(Path(scratch) / "cache")
        rows = []
        for attempt in ("first", "second"):
            seconds: list[float] = []

            def on_event(event: StateEvent, seconds: list[float] = seconds) -> None:
                if event.kind == "exited" and event.state == "ConvertToOnnx" and event.seconds is not None:
                    seconds.append(event.seconds)

            state = PipelineState(run_id=f"cache-{attempt}", spec=spec)
            outcome, leaked = run_local(
                state, results_dir=Path(scratch) / "results", time_scale=30.0, on_event=on_event
            )
            if outcome.status != "SUCCEEDED" or leaked:
                raise SystemExit(
                    f"the {attempt} run did not succeed cleanly: {outcome.status} {outcome.cause} {leaked}"
                )
            cache = (outcome.output or {})["convert"]["cache"]
            figures[f"{attempt}_convert_s"] = round(seconds[0], 2)
            figures[f"{attempt}_cache_status"] = cache["status"]
            rows.append([attempt, f"{seconds[0]:.2f}", cache["status"]])
    figures["second_over_first"] = round(figures["second_convert_s"] / figures["first_convert_s"], 4)
    figures["target_second_convert_s"] = 2.0
    figures["load_average_1m_after"] = machine()["load_average_1m"]
    print(table(["run", "ConvertToOnnx s", "cache"], rows))
    write_figures("conversion_cache", figures)


if __name__ == "__main__":
    main()
