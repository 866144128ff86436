"""A GPU artifact's device build in the local container environment's wheelhouse: which pins are device
builds, and that one already there is not fetched again (the fetch itself runs in the GPU local run)."""

from __future__ import annotations

from pathlib import Path

from workflows.container.environment import DlcEnvironment, device_pins, ensure_device_wheels

GPU_REQUIREMENTS = "onnxruntime-gpu==1.31.1  # CUDA 12\ntokenizers==0.22.2\nnumpy>=1.26\n"


def test_the_device_pins_are_the_gpu_builds_pinned_exactly() -> None:
    assert device_pins(GPU_REQUIREMENTS) == ["onnxruntime-gpu==1.31.1"]
    assert device_pins("onnxruntime_gpu == 1.26.0\n") == ["onnxruntime_gpu==1.26.0"]
    assert device_pins("onnxruntime==1.31.1\nonnxruntime-gpu>=1.20\n") == []


def test_a_device_build_already_in_the_wheelhouse_is_not_fetched_again(tmp_path: Path) -> None:
    # Given an environment whose wheelhouse holds onnxruntime-gpu 1.31.1 (no interpreter: nothing may run)
    environment = DlcEnvironment(tmp_path / "dlc-x")
    environment.wheelhouse.mkdir(parents=True)
    (environment.wheelhouse / "onnxruntime_gpu-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    announced: list[str] = []
    # When a GPU artifact's requirements are prepared
    added = ensure_device_wheels(environment, GPU_REQUIREMENTS, announce=announced.append)
    # Then nothing is fetched or announced
    assert added == [] and announced == []
