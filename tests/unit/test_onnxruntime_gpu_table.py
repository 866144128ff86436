"""workflows/data/onnxruntime_gpu.yaml: the release ranges agree with what the recorded wheels link (F36)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from workflows.gpu.device import build_table, gpu_build, gpu_release, newest_build_for, recorded_builds

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheels_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "onnxruntime_wheels", ROOT / "bench/gpu/onnxruntime_wheels.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _range_build(version: str) -> tuple[int, int]:
    parts = tuple(int(p) for p in version.split("."))
    rows = [
        r for r in build_table()["pypi_builds"] if parts >= tuple(int(p) for p in str(r["since"]).split("."))
    ]
    return int(rows[-1]["cuda_major"]), int(rows[-1]["cudnn_major"])


def test_every_recorded_wheel_agrees_with_its_release_range() -> None:
    # Given the wheels the table records (read from PyPI's wheels with readelf -d)
    builds = recorded_builds()
    assert len(builds) >= 10
    # Then each release's range row says the CUDA and cuDNN majors its providers link
    for version, build in builds.items():
        assert _range_build(version) == (build.cuda_major, build.cudnn_major), version
        assert f"libcudart.so.{build.cuda_major}" in build.sonames


def test_1_27_and_later_link_cuda_13_and_1_26_0_is_the_last_cuda_12_build() -> None:
    assert gpu_build("1.31.1").cuda_major == 13  # type: ignore[union-attr]
    assert "libcublas.so.13" in gpu_build("1.27.0").sonames  # type: ignore[union-attr]
    assert gpu_build("1.26.0").cuda_major == 12  # type: ignore[union-attr]
    assert newest_build_for(12).version == "1.26.0"  # type: ignore[union-attr]
    # A release the table does not record takes its range (1.30.1 is not on PyPI: CUDA 13 by range)
    assert (gpu_build("1.30.1").cuda_major, gpu_build("1.30.1").sonames) == (13, ())  # type: ignore[union-attr]


def test_the_pin_is_the_conversions_own_when_it_fits_the_image_else_the_newest_that_does() -> None:
    assert gpu_release("1.31.1", 13) == "1.31.1"
    assert gpu_release("1.31.1", 12) == "1.26.0"
    assert gpu_release("1.24.4", 12) == "1.24.4"
    # An image whose CUDA is not known keeps the conversion's version (F36 then warns)
    assert gpu_release("1.31.1", None) == "1.31.1"


def test_the_recorded_wheels_block_is_the_scripts_output(wheels_script: ModuleType) -> None:
    # The table's `wheels` are written by bench/gpu/onnxruntime_wheels.py, not by hand
    text = (ROOT / "workflows/data/onnxruntime_gpu.yaml").read_text(encoding="utf-8")
    assert wheels_script.as_yaml(build_table()["wheels"]) in text


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf (binutils) is not installed")
def test_the_script_reads_needed_entries_with_readelf(wheels_script: ModuleType) -> None:
    # Given the CPU onnxruntime's own library (an ELF with NEEDED entries, no CUDA)
    import onnxruntime

    library = next((Path(onnxruntime.__file__).parent / "capi").glob("libonnxruntime.so*"))
    sonames = wheels_script.needed(library)
    # Then the C library is among its NEEDED entries, and nothing it links is recorded as CUDA
    assert any(s.startswith("libc.so.") for s in sonames)
    assert [s for s in sonames if wheels_script.RECORDED.match(s)] == []
