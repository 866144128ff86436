"""A locked-down account on the local engine: an SCP that denies an unkeyed CreateEndpointConfig is
named (F38) and the run still tears down what it created; a spec with the key and a VPC passes the
same policy and runs end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import fast_spec, serving_processes
from tests.support.local_pipeline import BEFORE_DEPLOY, run
from tests.support.remediation import EMPTY, collapse, nothing_left, run_to_the_end
from workflows.contracts import PipelineState
from workflows.local.engine import LocalEngine
from workflows.local.faults import Fault, FaultPlan

TIME_SCALE = 200.0
KEY = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
VPC = {
    "subnets": ["subnet-0123456789abcdef0", "subnet-0fedcba9876543210"],
    "security_groups": ["sg-0123456789abcdef0"],
}
# The organization's policy: no endpoint config without a customer key.
SCP = FaultPlan(faults=[Fault(id="F38", action="CreateEndpointConfig", unless="KmsKeyId")])


@pytest.fixture(autouse=True)
def light_server(monkeypatch: pytest.MonkeyPatch) -> None:
    from workflows.container.environment import SERVER_ENV

    monkeypatch.setenv(SERVER_ENV, "light")


def test_a_denied_create_is_named_and_what_was_created_is_torn_down(tiny_bert: Path, tmp_path: Path) -> None:
    # Given an SCP that denies CreateEndpointConfig without a KmsKeyId, and a spec without a key
    spec = fast_spec(tiny_bert)
    state = PipelineState(run_id="deny-1", spec=spec)
    # When the pipeline runs
    finished = run_to_the_end(state, tmp_path, time_scale=TIME_SCALE, fault_plan=SCP)
    outcome, result = finished.outcome, finished.result
    # Then the deploy fails with the denial, diagnosed as F38, and the failure path tears down
    assert outcome.status == "FAILED"
    assert outcome.error == "AwsAccessDenied"
    states = collapse(outcome.states)
    assert states[: len(BEFORE_DEPLOY) + 1] == [*BEFORE_DEPLOY, "DeployEndpoint"]
    assert "DiagnoseFailure" in states and "TeardownAfterFailure" in states
    assert states.index("DiagnoseFailure") < states.index("TeardownAfterFailure")
    assert result["diagnosis"]["id"] == "F38"
    # And the report names the denied action and the spec field that meets the policy
    assert "sagemaker:CreateEndpointConfig" in outcome.cause and "hosting.kms_key_id" in outcome.cause
    # And the model created before the denial is gone
    assert "model/db-deny-1-a1-m0" in result["teardown"]["deleted"]
    assert finished.left == EMPTY
    assert serving_processes() == []


def test_a_spec_that_meets_the_policy_runs_in_its_vpc_with_its_key(tiny_bert: Path, tmp_path: Path) -> None:
    # Given the same policy, and a spec with the key and a VPC
    spec = fast_spec(tiny_bert, hosting={"kms_key_id": KEY, "vpc": VPC})
    state = PipelineState(run_id="keyed-1", spec=spec)
    with LocalEngine(workdir=tmp_path / "engine", time_scale=TIME_SCALE, fault_plan=SCP) as engine:
        # When the pipeline runs
        outcome = run(engine, state)
        left = nothing_left(engine)
    # Then the policy lets the keyed endpoint config through, the run succeeds and leaves nothing
    assert outcome.status == "SUCCEEDED", outcome.cause
    assert collapse(outcome.states)[-1] == "PipelineSucceeded"
    assert left == EMPTY
    assert serving_processes() == []


@pytest.mark.slow
def test_an_isolated_endpoint_serves_from_the_wheels_pack_vendored(
    tiny_bert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workflows.container.environment import SERVER_ENV, resolve_serving_stack

    stack = resolve_serving_stack("auto")
    if stack.kind != "mms" or stack.environment is None:
        pytest.skip(f"the DLC's serving stack is not available here: {stack.reason}")
    # Given the real serving stack (the toolkit pip installs code/requirements.txt at start), pack's wheels
    # taken from the DLC's offline wheelhouse, and an isolated spec: its container gets no wheelhouse
    monkeypatch.setenv(SERVER_ENV, "mms")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(stack.environment.wheelhouse))
    spec = fast_spec(
        tiny_bert,
        hosting={"network_isolation": True},
        benchmark={"batch_sizes": [1], "sequence_lengths": [16]},
    )
    state = PipelineState(run_id="iso-1", spec=spec)
    with LocalEngine(workdir=tmp_path / "engine", time_scale=20.0) as engine:
        # When the pipeline runs
        outcome = run(engine, state)
        left = nothing_left(engine)
        log = "".join(
            p.read_text() for p in sorted((tmp_path / "engine" / "endpoint-logs").glob("db-iso-1-a1*.log"))
        )
    # Then the preflight let the vendored artifact through, the container installed onnxruntime from the
    # artifact's own wheels, served, and nothing is left
    assert outcome.status == "SUCCEEDED", outcome.cause
    assert "code/wheels" in log and "onnxruntime" in log
    assert left == EMPTY
    assert serving_processes() == []
