"""Remediation paths end to end: the real definition and handlers on the local engine, the failure
from the local SageMaker's fault plan (F06, F20), the fixed configuration deployed, nothing left.
SageMaker's own fallback too: instance pools, of one device or across CPU and GPU types (one Model
per device, ModelNameOverride).

The light server serves (as in test_local_pipeline.py): these run at 200x, where MMS's 30-60 s
start would read as hours of Creating. Failures only the real stack produces are in
test_local_remediation_stack.py; those that need a hosting mode of their own are in
test_local_remediation_modes.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import fast_spec, serving_processes
from tests.support.local_pipeline import BEFORE_DEPLOY
from tests.support.remediation import EMPTY, REDEPLOYED_ONCE, WAIT_LOOP, Finished, collapse, run_to_the_end
from workflows.contracts import PipelineState
from workflows.local.faults import Fault, FaultPlan

TIME_SCALE = 200.0


@pytest.fixture(autouse=True)
def light_server(monkeypatch: pytest.MonkeyPatch) -> None:
    from workflows.container.environment import SERVER_ENV

    monkeypatch.setenv(SERVER_ENV, "light")


def test_a_capacity_stall_redeploys_on_the_next_instance_type_and_teardown_deletes_the_stalled_one(
    tiny_bert: Path, tmp_path: Path
) -> None:
    # Given no capacity for the first instance type: Creating, no variants, frozen LastModifiedTime,
    # and Failed only after the field's 50 minutes (F06)
    # (capacity: recreate: one type per endpoint, deploybench's own fallback)
    plan = FaultPlan(faults=[Fault(id="F06", instance_types=["ml.c6i.xlarge"])])
    spec = fast_spec(
        tiny_bert,
        hosting={"instance_type_fallbacks": ["ml.c6i.xlarge", "ml.c6i.2xlarge"], "capacity": "recreate"},
    )
    state = PipelineState(run_id="rem-stall-1", spec=spec)
    # When the pipeline runs
    finished = run_to_the_end(state, tmp_path, time_scale=TIME_SCALE, fault_plan=plan)
    outcome, result = finished.outcome, finished.result
    # Then the stall was diagnosed, the next type deployed under a new name, and the run succeeded
    assert outcome.status == "SUCCEEDED", outcome.cause
    assert collapse(outcome.states) == REDEPLOYED_ONCE
    assert result["deploy"]["endpoint_name"] == "db-rem-stall-1-a2"
    assert result["hosting"]["instance_type"] == "ml.c6i.2xlarge"
    assert result["hosting"]["attempts"] == 2
    # And the stall is recorded: recognised after the threshold, long before the endpoint fails,
    # and the stalled endpoint left for teardown (AWS refuses to delete it while Creating)
    [stall] = result["attempt"]["history"]
    assert (stall["diagnosis_id"], stall["action"], stall["applied"]) == ("F06", "next_instance_type", True)
    assert spec.wait.stall_threshold_min * 60 <= stall["waited_s"] < 50 * 60
    assert stall["changes"] == [
        {"setting": "instance_type", "before": "ml.c6i.xlarge", "after": "ml.c6i.2xlarge"}
    ]
    assert stall["left"][0].startswith("endpoint/db-rem-stall-1-a1 (busy")
    # And the final teardown retried until it could delete it (within its retry budget: one entry,
    # no failure path); its last try is the one that reports the stalled endpoint deleted
    assert "endpoint/db-rem-stall-1-a1" in result["teardown"]["deleted"]
    assert outcome.states.count("TeardownEndpoint") == 1
    # And its time is costed, and the report shows the remediation
    assert any(
        line["item"].startswith("attempt 1 endpoint ml.c6i.xlarge") for line in result["cost"]["lines"]
    )
    # And nothing is left: no endpoint, config, model or server process
    assert finished.left == EMPTY
    assert finished.leaked == []
    assert serving_processes() == []


def served_after_a_pool_fallback(state: PipelineState, tmp_path: Path, plan: FaultPlan) -> Finished:
    """Run ``state`` to the end; it must succeed on its first endpoint with no remediation."""
    finished = run_to_the_end(state, tmp_path, time_scale=TIME_SCALE, fault_plan=plan)
    outcome, result = finished.outcome, finished.result
    assert outcome.status == "SUCCEEDED", outcome.cause
    assert "PlanRemediation" not in outcome.states
    assert (result["deploy"]["endpoint_name"], result["hosting"]["attempts"]) == (f"db-{state.run_id}-a1", 1)
    return finished


def test_instance_pools_fall_back_to_the_second_type_within_one_endpoint(
    tiny_bert: Path, tmp_path: Path
) -> None:
    # Given no capacity for the first instance type (F06) and two types, sent as instance pools
    plan = FaultPlan(faults=[Fault(id="F06", instance_types=["ml.c6i.xlarge"])])
    spec = fast_spec(tiny_bert, hosting={"instance_type_fallbacks": ["ml.c6i.xlarge", "ml.c6i.2xlarge"]})
    # When the pipeline runs, Then SageMaker's own fallback served it: one attempt, one endpoint
    finished = served_after_a_pool_fallback(PipelineState(run_id="pools-1", spec=spec), tmp_path, plan)
    result = finished.result
    assert result["deploy"]["instance_pools"] == ["ml.c6i.xlarge", "ml.c6i.2xlarge"]
    # And the wait saw the fallback, and result.json names the type that served
    assert (
        result["endpoint"]["pools_line"]
        == "priority 1 ml.c6i.xlarge: 0, falling back; priority 2 ml.c6i.2xlarge: 1"
    )
    assert result["hosting"]["instance_type"] == "ml.c6i.2xlarge"
    assert result["hosting"]["served_instance_types"] == {"ml.c6i.2xlarge": 1}
    assert result["fleet"]["mixed"] is False
    # And the benchmark recorded the fleet before and after measuring, one type throughout
    assert result["benchmark"]["fleet"]["before"] == {"ml.c6i.xlarge": 0, "ml.c6i.2xlarge": 1}
    assert result["benchmark"]["fleet"]["served"] == ["ml.c6i.2xlarge"]
    # And the cost is the served type's instance hours
    assert any(line["item"] == "endpoint ml.c6i.2xlarge × 1" for line in result["cost"]["lines"])
    assert finished.left == EMPTY
    assert serving_processes() == []


def test_a_gpu_pool_without_capacity_falls_to_the_cpu_pool_and_its_own_artifact(
    tiny_bert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workflows.conversion import build

    exports: list[Path] = []
    export_onnx = build.export_onnx
    monkeypatch.setattr(build, "export_onnx", lambda *a, **k: exports.append(a[3]) or export_onnx(*a, **k))
    # Given no capacity for the GPU type (F06) and a CPU type after it, pooled
    plan = FaultPlan(faults=[Fault(id="F06", instance_types=["ml.g5.xlarge"])])
    spec = fast_spec(
        tiny_bert,
        hosting={
            "mode": "realtime",
            "capacity": "pools",
            "instance_type_fallbacks": ["ml.g5.xlarge", "ml.c6i.xlarge"],
        },
    )
    # When the pipeline runs, Then one attempt and one endpoint served it, with no remediation
    finished = served_after_a_pool_fallback(PipelineState(run_id="pools-dev-1", spec=spec), tmp_path, plan)
    result = finished.result
    # And the convert step made a GPU artifact (fp16) and a CPU artifact (fp32), each parity-checked
    convert = result["convert"]
    assert (convert["manifest"]["serving"]["device"], convert["manifest"]["precision"]) == ("gpu", "fp16")
    [cpu] = convert["device_artifacts"]
    assert (cpu["device"], cpu["manifest"]["precision"], cpu["manifest"]["serving"]["device"]) == (
        "cpu",
        "fp32",
        "cpu",
    )
    assert convert["manifest"]["quantization"]["passed"] and cpu["manifest"]["parity"]["passed"]
    # And both came from one export (and one PyTorch reference), and the preflight checked both
    assert len(exports) == 1
    assert any(line.startswith("cpu artifact: ") for line in result["preflight"]["checked"])
    # And one Model per device, the CPU pool overriding the variant's
    assert result["deploy"]["model_names"] == ["db-pools-dev-1-a1-m0", "db-pools-dev-1-a1-m1"]
    assert result["deploy"]["device_models"] == {"gpu": "db-pools-dev-1-a1-m0", "cpu": "db-pools-dev-1-a1-m1"}
    # And the wait saw the fallback, and result.json names the pool that served: type, device, artifact
    assert (
        result["endpoint"]["pools_line"]
        == "priority 1 ml.g5.xlarge (gpu): 0, falling back; priority 2 ml.c6i.xlarge (cpu): 1"
    )
    assert result["hosting"]["instance_type"] == "ml.c6i.xlarge"
    [pool] = result["hosting"]["served_pools"]
    assert (pool["priority"], pool["instance_type"], pool["device"], pool["model"]) == (2, "ml.c6i.xlarge", "cpu", "db-pools-dev-1-a1-m1")  # fmt: skip
    assert pool["artifact"]["onnx_file"] == "model.onnx" and pool["artifact"]["precision"] == "fp32"
    assert pool["artifact"]["model_data_uri"].endswith("/pools-dev-1/cpu/model.tar.gz")
    assert result["fleet"]["mixed"] is False
    assert result["fleet"]["label"].endswith("; ml.c6i.xlarge: cpu artifact model.onnx (fp32)")
    # And the endpoint really served the CPU artifact: the CPU provider, with no GPU stand-in note
    served = result["warmup"]["served_by"]
    assert (served["provider"], served["precision"], served["runtime"].split()[0]) == (
        "CPUExecutionProvider",
        "fp32",
        "onnxruntime",
    )
    assert set(served) == {"provider", "precision", "runtime"}
    # And the figures and the cost are the CPU type's
    assert any(line["item"] == "endpoint ml.c6i.xlarge × 1" for line in result["cost"]["lines"])
    # And teardown deleted both models: nothing is left
    for model in result["deploy"]["model_names"]:
        assert f"model/{model}" in result["teardown"]["deleted"]
    assert finished.left == EMPTY
    assert finished.leaked == []
    assert serving_processes() == []


def test_a_stall_on_every_listed_type_fails_once_the_list_is_empty(tiny_bert: Path, tmp_path: Path) -> None:
    # Given no capacity anywhere, and two types listed: the first attempt pools both (SageMaker's
    # fallback runs out at the pools' provision timeout), the second recreates on the second type
    plan = FaultPlan(faults=[Fault(id="F06", stall_minutes=12)])
    spec = fast_spec(tiny_bert, wait={"stall_threshold_min": 5})
    state = PipelineState(run_id="rem-stall-2", spec=spec)
    # When the pipeline runs
    finished = run_to_the_end(state, tmp_path, time_scale=TIME_SCALE, fault_plan=plan)
    outcome, result = finished.outcome, finished.result
    # Then both types were tried, then the run failed with the stall's diagnosis
    assert outcome.status == "FAILED"
    assert outcome.error == "CapacityStall"
    stalled = [*WAIT_LOOP, "DiagnoseFailure", "PlanRemediation", "ChooseRemediation"]
    assert collapse(outcome.states) == [
        *BEFORE_DEPLOY,
        "DeployEndpoint",
        *stalled,
        "RemoveFailedAttempt",
        "DeployEndpoint",
        *stalled,
        "TeardownAfterFailure",
        "WriteFailureReport",
        "PipelineFailed",
    ]
    history = result["attempt"]["history"]
    assert [(r["attempt"], r["applied"]) for r in history] == [(1, True), (2, False)]
    assert "no fallback instance type left" in history[1]["reason"]
    assert result["diagnosis"]["id"] == "F06"
    # And the first attempt was diagnosed as pools exhausted, then recreated on the next type
    assert "instance pools exhausted" in history[0]["diagnosis_title"]
    assert history[0]["changes"] == [
        {"setting": "instance_type", "before": "ml.c6i.xlarge", "after": "ml.c6i.2xlarge"}
    ]
    # And teardown deleted the stalled endpoints once they failed
    assert "endpoint/db-rem-stall-2-a2" in result["teardown"]["deleted"]
    assert finished.left == EMPTY
    assert serving_processes() == []


def test_cuda_803_redeploys_with_the_inference_ami_for_the_image_cuda(
    tiny_bert: Path, tmp_path: Path
) -> None:
    from workflows.preflight.containers import minimum_ami

    # Given a GPU type whose default AMI's driver is older than the image's CUDA (F20)
    plan = FaultPlan(faults=[Fault(id="F20")])
    spec = fast_spec(
        tiny_bert, hosting={"instance_type_fallbacks": ["ml.g5.xlarge"]}, benchmark={"runner": "lambda"}
    )
    state = PipelineState(run_id="rem-803-1", spec=spec)
    # When the pipeline runs
    finished = run_to_the_end(
        state, tmp_path, time_scale=TIME_SCALE, fault_plan=plan, log_of="db-rem-803-1-a2"
    )
    outcome, result = finished.outcome, finished.result
    # Then the container's error 803 was diagnosed and the endpoint redeployed with the AMI for CUDA 12.4
    assert outcome.status == "SUCCEEDED", outcome.cause
    assert collapse(outcome.states) == REDEPLOYED_ONCE
    expected = minimum_ami((12, 4))
    assert expected is not None
    assert result["hosting"]["inference_ami_version"] == expected.name
    [record] = result["attempt"]["history"]
    assert (record["diagnosis_id"], record["action"]) == ("F20", "newer_ami")
    assert record["changes"] == [{"setting": "inference_ami_version", "before": None, "after": expected.name}]
    # And the failed endpoint was deleted before the next deploy (it had left Creating)
    assert record["removed"][0] == "endpoint/db-rem-803-1-a1"
    assert "CUDA Forward Compatibility mode ENABLED" in finished.log
    assert finished.left == EMPTY
    assert serving_processes() == []


def test_an_account_quota_of_zero_on_create_endpoint_redeploys_on_the_next_instance_type(
    tiny_bert: Path, tmp_path: Path
) -> None:
    # Given an account whose ml.c6i.xlarge endpoint quota is 0: CreateEndpoint is refused with
    # ResourceLimitExceeded and AWS's text (F39)
    plan = FaultPlan(faults=[Fault(id="F39", instance_types=["ml.c6i.xlarge"])])
    # (recreate: deploybench's own next-type path; instance pools fall back on capacity, not on quota)
    spec = fast_spec(
        tiny_bert,
        hosting={"instance_type_fallbacks": ["ml.c6i.xlarge", "ml.c6i.2xlarge"], "capacity": "recreate"},
    )
    state = PipelineState(run_id="rem-quota-1", spec=spec)
    # When the pipeline runs
    finished = run_to_the_end(state, tmp_path, time_scale=TIME_SCALE, fault_plan=plan)
    outcome, result = finished.outcome, finished.result
    # Then the refusal was named F39, and the run went on, and succeeded, on the next type
    assert outcome.status == "SUCCEEDED", outcome.cause
    assert result["hosting"]["instance_type"] == "ml.c6i.2xlarge"
    [refused] = result["attempt"]["history"]
    assert (refused["diagnosis_id"], refused["action"], refused["applied"]) == (
        "F39",
        "next_instance_type",
        True,
    )
    assert refused["changes"] == [
        {"setting": "instance_type", "before": "ml.c6i.xlarge", "after": "ml.c6i.2xlarge"}
    ]
    assert "ResourceLimitExceeded" in refused["error"] or any(
        "ml.c6i.xlarge for endpoint usage" in line for line in refused["evidence"]
    )
