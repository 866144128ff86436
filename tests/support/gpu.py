"""Helpers for the GPU serving tests: GPU specs and artifacts converted for them, without a GPU."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import fast_spec
from workflows.contracts import StepRequest
from workflows.spec.pipeline import RunSpec

GPU_INSTANCE = "ml.g5.xlarge"
HF_GPU_IMAGE = (
    "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-inference:"
    "2.6.0-transformers4.51.3-gpu-py312-cu124-ubuntu22.04"
)
TRITON_CUDA13_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:26.05-py3"


def gpu_spec(source: str | Path, *, task: str = "embedding", **convert: Any) -> RunSpec:
    """``fast_spec`` on a GPU instance type (with a GPU fallback), ``convert`` fields applied."""
    return fast_spec(
        source,
        model={"task": task},
        hosting={"instance_type_fallbacks": [GPU_INSTANCE, "ml.g6.xlarge"]},
        convert=convert,
    )


def convert_for(spec: RunSpec, source: Path, root: Path) -> Path:
    """Run the convert step's build for ``spec`` into ``root/artifact``."""
    from workflows.conversion.build import build_artifact

    build_artifact(
        StepRequest(run_id="fixture", spec=spec),
        source=source,
        out=root / "artifact",
        scratch=root / "scratch",
    )
    return root / "artifact"


def task_of(source: Path) -> str:
    config = json.loads((source / "config.json").read_text())
    return "classification" if "ForSequenceClassification" in config["architectures"][0] else "embedding"


def provider_and_note(served_by: dict[str, str] | None) -> dict[str, str]:
    """The provider and note of an answer's ``served_by``, once it says onnxruntime served it (the GPU
    artifacts here run onnxruntime; the precision it computed in is the other key)."""
    assert served_by is not None and served_by["runtime"].startswith("onnxruntime "), served_by
    assert served_by["precision"] in ("fp32", "fp16", "int8"), served_by
    return {key: served_by[key] for key in ("provider", "note") if key in served_by}
