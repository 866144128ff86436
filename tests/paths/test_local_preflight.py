"""State-machine path: a blocking finding on the spec alone stops the run at CheckSpec, before any
conversion and before any SageMaker resource exists."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import fast_spec, serving_processes
from tests.support.local_pipeline import TIME_SCALE, UNREMEDIATED_FAILURE, results, run
from workflows.contracts import PipelineState
from workflows.local.engine import LocalEngine

# A CUDA 13 build of the HF DLC: the default driver of ml.g5 (470) cannot run it (F20, error 803).
CUDA13_IMAGE = (
    "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-inference:"
    "2.9.0-transformers4.57.1-gpu-py312-cu130-ubuntu24.04"
)


def test_blocking_finding_fails_before_deploy_with_its_diagnosis(tiny_bert: Path, tmp_path: Path) -> None:
    # Given a GPU spec whose image needs a newer driver than the instance's default AMI
    spec = fast_spec(tiny_bert, hosting={"instance_type_fallbacks": ["ml.g5.xlarge"], "image": CUDA13_IMAGE})
    state = PipelineState(run_id="preflight-1", spec=spec)
    with LocalEngine(workdir=tmp_path / "engine", time_scale=TIME_SCALE) as engine:
        # When the pipeline runs
        outcome = run(engine, state)
        result = results(engine, state.run_id, tmp_path)
        created = (
            (engine.sagemaker.models, engine.sagemaker.endpoints) if engine.sagemaker else ({"?": 1}, {})
        )
    # Then it stops at the checks on the spec, before any conversion, goes through diagnosis and
    # teardown, and never deploys
    assert outcome.status == "FAILED"
    assert outcome.error == "PreflightBlocked"
    assert outcome.states == [
        "CheckSpec",
        *UNREMEDIATED_FAILURE,
    ]
    assert created == ({}, {})
    # A blocked preflight is the spec's to fix, never remediated by redeploying
    assert result["remediation"]["route"] == "fail"
    # And the cause names the finding with its fix, and the diagnosis names the entry
    assert "F20 (blocking)" in result["error"]["Cause"]
    assert "al2023-ami-sagemaker-inference-gpu-4-1" in result["error"]["Cause"]
    assert (result["diagnosis"]["id"], result["diagnosis"]["action"]) == ("F20", "fail")
    assert result["diagnosis"]["alternatives"] == []  # the quoted error 803 is a prediction, not evidence
    assert serving_processes() == []
