"""Remediations that belong to a hosting mode of their own: serverless memory (F14) and inference
component memory (F10), each through its own hosting mode on the local SageMaker.
"""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import serving_processes
from tests.support.hosting import spec_with
from tests.support.local_pipeline import AFTER_IN_SERVICE, BEFORE_DEPLOY, results, run
from tests.support.remediation import EMPTY, collapse, nothing_left
from workflows.contracts import PipelineState
from workflows.local.engine import LocalEngine
from workflows.spec.pipeline import RunSpec


def mode_fields() -> dict[str, set[str]]:
    """Each ``mode`` value the spec's hosting union accepts, with its member's field names."""
    annotation = RunSpec.model_fields["hosting"].annotation
    modes: dict[str, set[str]] = {}
    for member in typing.get_args(annotation) or (annotation,):
        for mode in typing.get_args(member.model_fields["mode"].annotation):
            modes[mode] = set(member.model_fields)
    return modes


REDEPLOYED = [
    "DiagnoseFailure",
    "PlanRemediation",
    "ChooseRemediation",
    "RemoveFailedAttempt",
    "DeployEndpoint",
]


def assert_redeployed(states: list[str], times: int) -> None:
    """Ordered states of a run fixed by ``times`` redeploys: each failure diagnosed, planned, removed
    and deployed again, then the measured tail. The polling between is the mode's own (collapsed
    where it is the real-time loop), so only what the remediation enters is spelled out."""
    assert states[: len(BEFORE_DEPLOY) + 1] == [*BEFORE_DEPLOY, "DeployEndpoint"]
    assert [states[i : i + len(REDEPLOYED)] for i, s in enumerate(states) if s == "DiagnoseFailure"] == [
        REDEPLOYED
    ] * times
    assert states[-len(AFTER_IN_SERVICE) :] == AFTER_IN_SERVICE


# The mode each remediation override is meant for: an override whose field a mode renamed would
# be dropped silently by with_overrides, and the remediation would redeploy the same settings.
MODES_OF_OVERRIDE = {
    "serverless_memory_mb": ("serverless",),
    "ic_min_memory_mb": ("inference-component", "scale-to-zero"),
    "inference_ami_version": ("realtime",),
    "workers": ("realtime",),
    "ort_intra_op_threads": ("realtime",),
}


@pytest.mark.parametrize("override", sorted(MODES_OF_OVERRIDE))
def test_each_override_names_a_field_of_the_mode_it_is_for(override: str) -> None:
    from workflows.remediation.overrides import HOSTING_FIELD

    # Given the modes the override is for
    fields = mode_fields()
    # Then the hosting field the override replaces is a field of each of them
    for mode in MODES_OF_OVERRIDE[override]:
        assert HOSTING_FIELD[override] in fields[mode], mode


def test_serverless_memory_steps_up_until_the_model_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workflows.container.environment import SERVER_ENV, resolve_serving_stack
    from workflows.conversion.random_models import build_tiny_bert
    from workflows.local.sagemaker.memory import memory_cap_support

    if resolve_serving_stack("auto").kind != "mms" or not memory_cap_support()[0]:
        pytest.skip("F14 needs the real serving stack and a real memory cap")
    monkeypatch.setenv(SERVER_ENV, "mms")
    # Given a ~430 MB BERT on 1024 MB serverless: its worker dies while loading (F14). Preflight
    # would block it (its estimate says 3072 MB); the spec accepts that to test the runtime path.
    model = build_tiny_bert(tmp_path / "bert-1024", hidden=1024, layers=6)
    spec = spec_with(
        str(model),
        {"mode": "serverless", "memory_size_mb": 1024},
        benchmark={
            "batch_sizes": [1],
            "sequence_lengths": [16],
            "warmup_max_requests": 3,
            "warmup_max_s": 180,
        },
        preflight={"accept": ["F14"]},
    )
    state = PipelineState(run_id="rem-f14-1", spec=spec)
    with LocalEngine(workdir=tmp_path / "engine", time_scale=20.0) as engine:
        # When the pipeline runs
        outcome = run(engine, state)
        result = results(engine, state.run_id, tmp_path)
        left = nothing_left(engine)
    # Then memory went up one accepted size at a time until the model loaded
    assert outcome.status == "SUCCEEDED", outcome.cause
    history = result["attempt"]["history"]
    assert len(history) >= 1
    assert_redeployed(collapse(outcome.states), len(history))
    steps = [c["after"] for r in result["attempt"]["history"] for c in r["changes"]]
    assert steps == [2048, 3072, 4096, 5120, 6144][: len(steps)]
    assert all(r["diagnosis_id"] == "F14" for r in result["attempt"]["history"])
    assert result["hosting"]["memory_size_mb"] == steps[-1]
    assert left == EMPTY
    assert serving_processes() == []


def test_inference_component_memory_steps_down_until_it_is_placed(
    tiny_bert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workflows.container.environment import SERVER_ENV
    from workflows.local.faults import Fault, FaultPlan

    monkeypatch.setenv(SERVER_ENV, "light")
    # Given an instance that has 2048 MB left for the component, which asks for 6144 (F10)
    plan = FaultPlan(faults=[Fault(id="F10", memory_limit_mb=2048)])
    spec = spec_with(
        str(tiny_bert),
        {"mode": "inference-component", "instance_type_fallbacks": ["ml.c6i.xlarge"], "min_memory_mb": 6144},
    )
    state = PipelineState(run_id="rem-f10-1", spec=spec)
    with LocalEngine(workdir=tmp_path / "engine", time_scale=200.0, fault_plan=plan) as engine:
        # When the pipeline runs
        outcome = run(engine, state)
        result = results(engine, state.run_id, tmp_path)
        left: dict[str, Any] = nothing_left(engine)
    # Then MinMemoryRequiredInMb was halved twice (6144 -> 3072 -> 1536) and the component placed
    assert outcome.status == "SUCCEEDED", outcome.cause
    history = result["attempt"]["history"]
    assert [(r["diagnosis_id"], r["changes"][0]["after"]) for r in history] == [("F10", 3072), ("F10", 1536)]
    assert_redeployed(collapse(outcome.states), 2)
    assert result["hosting"]["min_memory_mb"] == 1536
    assert left == EMPTY
    assert serving_processes() == []
