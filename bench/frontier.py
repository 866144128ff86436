"""The Pareto frontier of latency against accuracy: every deploybench variant and every peer.

Reads bench/results/peers.json (one run of bench/peers.py: every variant side by side, the order
rotated each round) and, for each shape and thread count, lists each variant's median milliseconds
with its 95% interval and its minimum cosine to PyTorch fp32. A variant is on the front when no other
variant is both faster (its whole interval below this one's) and at least as accurate; a faster
median whose interval overlaps does not push a variant off, because the run cannot separate them.

    python bench/frontier.py

Then the INT8 targets: each deploybench INT8 artifact (onnxruntime's dynamic INT8, OpenVINO's static
INT8) against sentence-transformers' static OpenVINO INT8 and its ONNX qint8, as the ratio of the two
medians (peer over ours; bench/peers.py's paired per-round ratios are in peers.json for the default
INT8), with the target the comparison is held to and whether ours keeps min cosine >= 0.995.

Writes bench/results/frontier.json (flat) and prints one Markdown table per shape and thread count.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT / "bench" / "results" / "peers.json"
RESULTS = ROOT / "bench" / "results" / "frontier.json"
SHAPES = ("b1_natural", "b8_seq128", "b32_natural")
INT8_OURS = ("deploybench_int8", "deploybench_openvino_int8")
# (peer, the ratio it is held to per shape): ST's static OpenVINO INT8 and its ONNX qint8.
INT8_TARGETS = {
    "st_openvino_qint8": {"b1_natural": 1.10, "b8_seq128": 1.20},
    "st_qint8": {"b1_natural": 1.20, "b8_seq128": 1.20},
}
INT8_COSINE = 0.995


def points(figures: dict[str, Any], prefix: str) -> dict[str, dict[str, float]]:
    """``{variant: {ms, low, high, cosine}}`` of one shape and thread count (``b8_seq128_t1``)."""
    found: dict[str, dict[str, float]] = {}
    pattern = re.compile(rf"^{re.escape(prefix)}_(.+)_ms$")
    for key, value in figures.items():
        match = pattern.match(key)
        if match:
            name = match.group(1)
            found[name] = {
                "ms": float(value),
                "low": float(figures[f"{prefix}_{name}_ms_low"]),
                "high": float(figures[f"{prefix}_{name}_ms_high"]),
                "cosine": float(figures[f"{prefix}_{name}_min_cosine"]),
            }
    return found


def dominated_by(name: str, found: dict[str, dict[str, float]]) -> list[str]:
    """The variants separated faster than ``name`` and at least as accurate."""
    mine = found[name]
    return sorted(
        other
        for other, point in found.items()
        if other != name and point["high"] < mine["low"] and point["cosine"] >= mine["cosine"]
    )


def int8_targets(found: dict[str, dict[str, float]], shape: str, prefix: str, out: dict[str, Any]) -> None:
    """Print and record each deploybench INT8 artifact's ratio to the INT8 peers against its target."""
    rows = []
    for mine in (name for name in INT8_OURS if name in found):
        for peer, targets in INT8_TARGETS.items():
            if peer not in found or shape not in targets:
                continue
            ratio = found[peer]["ms"] / found[mine]["ms"]
            met = ratio >= targets[shape] and found[mine]["cosine"] >= INT8_COSINE
            out[f"{prefix}_{mine}_over_{peer}"] = round(ratio, 3)
            out[f"{prefix}_{mine}_over_{peer}_target_met"] = met
            rows.append(
                f"| {mine} | {peer} | {ratio:.2f}x | {targets[shape]:.2f}x | "
                f"{found[mine]['cosine']:.4f} | {'yes' if met else 'no'} |"
            )
    if rows:
        print("\n| INT8 | peer | peer / ours (medians) | target | min cosine ours | met |")
        print("|---|---|---|---|---|---|")
        print("\n".join(rows))


def main() -> None:
    figures = json.loads(PEERS.read_text(encoding="utf-8"))
    threads = sorted({int(m.group(1)) for k in figures if (m := re.search(r"_t(\d+)_", k))})
    out: dict[str, Any] = {
        "source": "bench/results/peers.json",
        "cpu_model": figures.get("cpu_model", ""),
        "cpu_flags": figures.get("cpu_flags", ""),
        "rule": "on the front unless another variant is separated faster (intervals apart) and at least as accurate",
    }
    for shape in SHAPES:
        for count in threads:
            prefix = f"{shape}_t{count}"
            found = points(figures, prefix)
            if not found:
                continue
            print(f"\n{shape}, {count} thread(s)\n")
            print(
                "| variant | computes in | ms [95% interval] | min cosine to fp32 | on the front | beaten by |"
            )
            print("|---|---|---|---|---|---|")
            for name in sorted(found, key=lambda n: found[n]["ms"]):
                point, beaten = found[name], dominated_by(name, found)
                computes = figures.get(f"t{count}_{name}_computes_in", "")
                out[f"{prefix}_{name}_ms"] = point["ms"]
                out[f"{prefix}_{name}_min_cosine"] = point["cosine"]
                out[f"{prefix}_{name}_on_front"] = not beaten
                print(
                    f"| {name} | {computes} | {point['ms']:.2f} [{point['low']:.2f}, {point['high']:.2f}] | "
                    f"{point['cosine']:.5f} | {'yes' if not beaten else 'no'} | {', '.join(beaten)} |"
                )
            int8_targets(found, shape, prefix, out)
    print(f"\nCPU {out['cpu_model']}, flags {out['cpu_flags']}")
    RESULTS.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
