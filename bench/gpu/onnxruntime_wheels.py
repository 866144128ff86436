"""The CUDA, cuDNN and TensorRT libraries each onnxruntime-gpu wheel's providers link, read from the wheels.

Reads ``onnxruntime/capi/libonnxruntime_providers_cuda.so`` and ``..._tensorrt.so`` out of PyPI's
linux x86_64 cp312 wheels (the HF inference DLC's Python) with ``readelf -d`` and records each
provider's NEEDED sonames of CUDA (libcudart, libcublas, libcublasLt, libcufft, libcurand), cuDNN
(libcudnn) and TensorRT (libnvinfer, libnvonnxparser). ``workflows/data/onnxruntime_gpu.yaml``'s
``wheels`` are this script's output and its ``pypi_builds`` are derived from them
(tests/unit/test_onnxruntime_gpu_table.py holds the two together).

Run it when the onnxruntime-gpu pin changes or a release is added; it needs PyPI and readelf, so
CI never runs it. ``--check`` exits 1 when a recorded row differs from its wheel.

Usage: python bench/gpu/onnxruntime_wheels.py [--check] [--wheels DIR] [VERSION ...]
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "workflows" / "data" / "onnxruntime_gpu.yaml"
PROVIDERS = {
    "cuda": "onnxruntime/capi/libonnxruntime_providers_cuda.so",
    "tensorrt": "onnxruntime/capi/libonnxruntime_providers_tensorrt.so",
}
# CUDA runtime and math libraries, cuDNN, TensorRT: what the image (or the artifact) must ship.
RECORDED = re.compile(
    r"^lib(cudart|cublas|cublasLt|cufft|curand|cudnn|nvinfer|nvinfer_plugin|nvonnxparser)\.so\.\d+$"
)
PIP_TARGET = ["--platform", "manylinux_2_28_x86_64", "--python-version", "3.12", "--only-binary=:all:"]


def needed(library: Path) -> list[str]:
    """The NEEDED entries of an ELF shared object's dynamic section."""
    out = subprocess.run(["readelf", "-d", str(library)], check=True, capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def wheel_row(wheel: Path) -> dict[str, Any]:
    """One ``wheels`` row: the wheel's name and sha256, and per provider the sonames it links."""
    version = wheel.name.split("-")[1]
    row: dict[str, Any] = {
        "version": version,
        "wheel": wheel.name,
        "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
    }
    with zipfile.ZipFile(wheel) as archive, tempfile.TemporaryDirectory() as scratch:
        names = set(archive.namelist())
        for provider, member in PROVIDERS.items():
            if member not in names:
                continue
            sonames = needed(Path(archive.extract(member, scratch)))
            row[provider] = sorted(s for s in sonames if RECORDED.match(s))
    return row


def as_yaml(rows: list[dict[str, Any]]) -> str:
    """The ``wheels`` block of the table, one flow mapping per release."""
    lines = ["wheels:"]
    for row in rows:
        lines.append(f'  - version: "{row["version"]}"')
        lines.append(f"    wheel: {row['wheel']}")
        lines.append(f"    sha256: {row['sha256']}")
        for provider in PROVIDERS:
            if provider in row:
                lines.append(f"    {provider}: [{', '.join(row[provider])}]")
    return "\n".join(lines) + "\n"


def download(version: str, into: Path) -> Path:
    found = sorted(into.glob(f"onnxruntime_gpu-{version}-cp312-*.whl"))
    if not found:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                f"onnxruntime-gpu=={version}",
                "--no-deps",
                "-q",
                "-d",
                str(into),
            ]
            + PIP_TARGET,
            check=True,
        )
        found = sorted(into.glob(f"onnxruntime_gpu-{version}-cp312-*.whl"))
    if not found:
        raise SystemExit(f"no cp312 linux x86_64 wheel of onnxruntime-gpu {version} in {into}")
    return found[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("versions", nargs="*", help="releases to read (default: the table's recorded ones)")
    parser.add_argument("--wheels", type=Path, default=Path(tempfile.gettempdir()) / "ortgpu")
    parser.add_argument("--check", action="store_true", help="compare with the table, write nothing")
    args = parser.parse_args()
    table = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    recorded = {str(row["version"]): row for row in table.get("wheels") or []}
    versions = args.versions or list(recorded)
    args.wheels.mkdir(parents=True, exist_ok=True)
    rows = {v: wheel_row(download(v, args.wheels)) for v in versions}
    for version, row in rows.items():
        print(
            version,
            "| cuda:",
            " ".join(row.get("cuda", [])),
            "| tensorrt:",
            " ".join(row.get("tensorrt", [])),
        )
    if args.check:
        differ = [v for v, row in rows.items() if recorded.get(v) != row]
        for version in differ:
            print(
                f"{version}: the table says {recorded.get(version)}, the wheel {rows[version]}",
                file=sys.stderr,
            )
        return 1 if differ else 0
    print("\n" + as_yaml(list(rows.values())), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
