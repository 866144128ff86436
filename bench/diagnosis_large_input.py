"""Bad and large pasted files: each gets an answer within 10 s, as `deploybench diagnose --log` gives it.

Inputs, written to a temporary folder: healthy model-server logs of 1, 10, 93 and 200 MB with one
failure (a missing module) on their last line, an empty file, a binary file, and a log with bytes
that are not UTF-8. Each runs `deploybench diagnose --log FILE --json` in its own process; the
figures are its wall time, its peak memory (max RSS), its exit code and its answer.

Target: every input answered (an entry, unknown with exit 3, or an error naming the problem) within
10 s, never a traceback; the large logs name the failure at their end.
Usage: python bench/diagnosis_large_input.py
Writes bench/results/diagnosis_large_input.json (flat).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "diagnosis_large_input.json"
HEALTHY = ROOT / "tests" / "data" / "logs" / "healthy_hf_dlc_realtime.log"
FAILURE = (
    "2026-12-01T04:10:33,120 [INFO ] W-9001-model-stdout com.amazonaws.ml.mms.wlm.WorkerLifeCycle - "
    "ModuleNotFoundError: No module named 'onnxruntime'\n"
)
SIZES_MB = (1, 10, 93, 200)
TARGET_S = 10.0


def cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def write_inputs(folder: Path) -> dict[str, Path]:
    block = HEALTHY.read_bytes()
    inputs: dict[str, Path] = {}
    for size in SIZES_MB:
        path = folder / f"healthy_{size}mb_then_failure.log"
        with path.open("wb") as out:
            for _ in range(size * (1 << 20) // len(block)):
                out.write(block)
            out.write(FAILURE.encode())
        inputs[f"log_{size}mb"] = path
    inputs["empty"] = folder / "empty.log"
    inputs["empty"].write_bytes(b"")
    inputs["binary"] = folder / "model.onnx"
    inputs["binary"].write_bytes(bytes(range(256)) * 4096)
    inputs["not_utf8"] = folder / "latin1.log"
    inputs["not_utf8"].write_bytes(
        "Überprüfung fehlgeschlagen: ".encode("latin-1") + b"\xff\xfe\n" + FAILURE.encode()
    )
    return inputs


def run(path: Path, folder: Path) -> dict[str, Any]:
    command = [str(Path(sys.executable).parent / "deploybench"), "diagnose", "--log", str(path), "--json"]
    with (folder / "out").open("w+b") as out, (folder / "err").open("w+b") as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)  # its own peak memory, not the children's maximum
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    answer = "error"
    with contextlib.suppress(ValueError):
        answer = json.loads(stdout).get("id", "error")
    return {
        "bytes": path.stat().st_size,
        "seconds": round(seconds, 2),
        "exit_code": os.waitstatus_to_exitcode(status),
        "answer": answer,
        "traceback": b"Traceback (most recent call last)" in stderr,
        "max_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "message": (stderr.decode(errors="replace").strip().splitlines() or [""])[0][:160],
    }


def main() -> None:
    figures: dict[str, Any] = {
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "target_seconds": TARGET_S,
    }
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, path in write_inputs(Path(folder)).items():
            result = run(path, Path(folder))
            for key, value in result.items():
                figures[f"{name}_{key}"] = value
            rows.append([name, f"{result['bytes'] / (1 << 20):.1f}", f"{result['seconds']:.2f}",
                         str(result["max_rss_mb"]), str(result["exit_code"]), result["answer"],
                         "yes" if result["traceback"] else "no"])  # fmt: skip
    figures["all_within_target"] = all(
        figures[f"{name}_seconds"] <= TARGET_S and not figures[f"{name}_traceback"]
        for name in ["empty", "binary", "not_utf8", *(f"log_{s}mb" for s in SIZES_MB)]
    )
    header = ["input", "MiB", "seconds", "max RSS MB", "exit", "answer", "traceback"]
    print(f"CPU: {figures['cpu_model']} ({figures['cpu_count']} cores, load {figures['load_average_1m']})")
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"all within {TARGET_S:.0f} s and without a traceback: {figures['all_within_target']}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
