"""PlanRemediation: each action's next configuration, its bounds, and what the state keeps."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.conftest import fast_spec
from tests.support.handlers import MANIFEST
from workflows.benchmark.results import WarmupResult
from workflows.contracts import (
    ConvertResult,
    DeployOverrides,
    DeployResult,
    Diagnosis,
    EndpointStatus,
    ErrorInfo,
    PackResult,
    PipelineState,
    PreflightResult,
)
from workflows.remediation.changes import SERVERLESS_MEMORY_MB
from workflows.remediation.plan import plan_remediation
from workflows.settings import Settings

SETTINGS = Settings(bucket="b", sagemaker_role_arn="arn:aws:iam::123456789012:role/r", region="us-east-1")
CREATED = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def failed(
    action: str,
    diagnosis_id: str = "F06",
    *,
    details: dict[str, str] | None = None,
    hosting: dict[str, Any] | None = None,
    remediation: dict[str, Any] | None = None,
    overrides: DeployOverrides | None = None,
    index: int = 0,
    number: int = 1,
    warmed: bool = False,
) -> PipelineState:
    """A run whose attempt ``number`` failed in the wait loop (or in warmup when ``warmed``)."""
    spec = fast_spec(
        "bundled",
        hosting=hosting or {"instance_type_fallbacks": ["ml.c6i.xlarge", "ml.c6i.2xlarge", "ml.m5.xlarge"]},
        remediation=remediation or {},
    )
    types = spec.hosting.instance_type_fallbacks
    state = PipelineState(
        run_id="plan-1",
        spec=spec,
        convert=ConvertResult(staging_uri="s3://b/staging/plan-1/", manifest=MANIFEST, seconds=1.0),
        pack=PackResult(
            model_data_uri="s3://b/artifacts/plan-1/model.tar.gz",
            size_bytes=1,
            sha256="0" * 64,
            compression="none",
            seconds=1.0,
        ),
        preflight=PreflightResult(),
        deploy=DeployResult(
            endpoint_name=f"db-plan-1-a{number}",
            endpoint_config_name=f"db-plan-1-a{number}",
            model_names=[f"db-plan-1-a{number}-m0"],
            instance_type=types[index],
            created_at=CREATED,
        ),
        endpoint=EndpointStatus(status="InService" if warmed else "Creating", polls=7),
        error=ErrorInfo(Error="WarmupFailed" if warmed else "CapacityStall", Cause="the field's cause"),
        diagnosis=Diagnosis(
            id=diagnosis_id,
            title=f"{diagnosis_id} title",
            evidence=["[error] first line", "second", "third", "fourth"],
            action=action,
            confidence=0.9,
            details=details or {},
        ),
    )
    attempt = state.attempt.model_copy(
        update={"number": number, "instance_type_index": index, "overrides": overrides or DeployOverrides()}
    )
    return state.model_copy(update={"attempt": attempt})


def plan(state: PipelineState) -> PipelineState:
    return plan_remediation(state, settings=SETTINGS)


def test_a_capacity_stall_moves_to_the_next_instance_type_under_a_new_attempt() -> None:
    # Given a stall on the first of three instance types
    state = failed("next_instance_type")
    # When the remediation is planned
    after = plan(state)
    # Then the next attempt deploys on the second type, and the pipeline redeploys
    assert after.remediation is not None and after.remediation.route == "redeploy"
    assert (after.attempt.number, after.attempt.instance_type_index) == (2, 1)
    # And the caught error and the failed attempt's results are cleared, kept in the history
    assert (after.error, after.diagnosis, after.deploy, after.endpoint) == (None, None, None, None)
    [record] = after.attempt.history
    assert record.applied and record.attempt == 1 and record.diagnosis_id == "F06"
    assert [(c.setting, c.before, c.after) for c in record.changes] == [
        ("instance_type", "ml.c6i.xlarge", "ml.c6i.2xlarge")
    ]
    assert record.endpoint_name == "db-plan-1-a1" and record.polls == 7
    assert record.evidence == ["[error] first line", "second", "third"]
    assert record.waited_s is not None and record.waited_s > 0


def test_a_stall_on_the_last_instance_type_fails_with_the_diagnosis() -> None:
    # Given a stall on the last listed type
    state = failed("next_instance_type", index=2, number=3)
    # When the remediation is planned
    after = plan(state)
    # Then the run fails: the error and the diagnosis stay, the refusal is recorded
    assert after.remediation is not None and after.remediation.route == "fail"
    assert "no fallback instance type left" in after.remediation.reason
    assert after.error == state.error and after.diagnosis == state.diagnosis
    assert after.attempt.number == 3 and not after.attempt.history[-1].applied


@pytest.mark.parametrize(
    ("remediation", "number", "reason"),
    [
        ({"next_instance_type": 0}, 1, "spec.remediation.next_instance_type allows 0"),
        ({"max_total_attempts": 2}, 2, "max_total_attempts (2)"),
        ({"enabled": False}, 1, "remediation is off"),
    ],
)
def test_each_remediation_is_bounded_by_the_spec(
    remediation: dict[str, Any], number: int, reason: str
) -> None:
    # Given a bound that is spent
    state = failed("next_instance_type", remediation=remediation, number=number)
    # When the remediation is planned
    after = plan(state)
    # Then the run fails saying which bound
    assert after.remediation is not None and after.remediation.route == "fail"
    assert reason in after.remediation.reason


def test_only_applied_remediations_count_against_the_bound() -> None:
    # Given one stall remediated, then a refused unknown failure
    first = plan(failed("next_instance_type", remediation={"next_instance_type": 2}))
    second = plan(failed("fail", "unknown", number=2, index=1).model_copy(update={"attempt": first.attempt}))
    assert second.remediation is not None and second.remediation.route == "fail"
    # When the second attempt stalls too
    third = plan(
        failed("next_instance_type", remediation={"next_instance_type": 2}, number=2, index=1).model_copy(
            update={"attempt": second.attempt}
        )
    )
    # Then one more instance type is tried (one applied of two allowed), and all three are recorded
    assert third.remediation is not None and third.remediation.route == "redeploy"
    assert third.attempt.instance_type_index == 2
    assert [r.applied for r in third.attempt.history] == [True, False, True]


def test_a_worker_that_died_redeploys_with_one_worker_using_every_core() -> None:
    # Given 8 workers with 2 threads each (F02)
    state = failed("single_worker", "F02", hosting={"workers": 8, "ort_intra_op_threads": 2}, warmed=True)
    # When the remediation is planned
    after = plan(state)
    # Then the next attempt has one worker and threads = cores (0), on the same instance type
    assert after.remediation is not None and after.remediation.route == "redeploy"
    assert after.attempt.overrides.workers == 1 and after.attempt.overrides.ort_intra_op_threads == 0
    assert after.attempt.instance_type_index == 0
    assert after.warmup is None
    # And once there, a second worker death fails: there is nothing left to shed
    again = plan(
        failed("single_worker", "F02", remediation={"single_worker": 1}, number=2).model_copy(
            update={"attempt": after.attempt}
        )
    )
    assert again.remediation is not None and again.remediation.route == "fail"


def test_one_worker_already_is_refused_with_the_reason() -> None:
    after = plan(failed("single_worker", "F02", hosting={"workers": 1, "ort_intra_op_threads": 0}))
    assert after.remediation is not None and after.remediation.route == "fail"
    assert "one worker using every core already" in after.remediation.reason


def test_cuda_803_redeploys_with_the_minimum_ami_for_the_image_cuda_then_a_newer_one() -> None:
    from workflows.preflight.containers import amis, minimum_ami

    # Given a GPU endpoint on the HF DLC (CUDA 12.4) that hit error 803 on the default AMI
    state = failed("newer_ami", "F20", hosting={"instance_type_fallbacks": ["ml.g5.xlarge"]})
    # When the remediation is planned
    after = plan(state)
    # Then the next attempt sets the minimum AMI whose driver runs CUDA 12.4
    expected = minimum_ami((12, 4))
    assert expected is not None
    assert after.attempt.overrides.inference_ami_version == expected.name
    # And a second 803 on that AMI moves one AMI newer
    second = failed(
        "newer_ami",
        "F20",
        hosting={"instance_type_fallbacks": ["ml.g5.xlarge"]},
        remediation={"newer_ami": 3},
    )
    second = plan(second.model_copy(update={"attempt": after.attempt.model_copy(update={"number": 2})}))
    names = [a.name for a in amis()]
    assert second.attempt.overrides.inference_ami_version == names[names.index(expected.name) + 1]


def test_cuda_803_on_the_newest_ami_fails() -> None:
    from workflows.preflight.containers import amis

    newest = amis()[-1].name
    state = failed(
        "newer_ami",
        "F20",
        hosting={"instance_type_fallbacks": ["ml.g5.xlarge"], "inference_ami_version": newest},
    )
    after = plan(state)
    assert after.remediation is not None and after.remediation.route == "fail"
    assert "newest InferenceAmiVersion" in after.remediation.reason


def test_serverless_memory_steps_up_to_6144_then_fails() -> None:
    # Given a serverless endpoint whose worker died at each size (memory carried in the overrides)
    seen = []
    overrides = DeployOverrides(serverless_memory_mb=1024)
    for number in range(1, 7):
        state = failed(
            "next_memory_size",
            "F14",
            overrides=overrides,
            number=number,
            remediation={"next_memory_size": 5, "max_total_attempts": 10},
        )
        # When each is planned
        after = plan(state)
        assert after.remediation is not None
        if after.remediation.route == "fail":
            break
        overrides = after.attempt.overrides
        seen.append(overrides.serverless_memory_mb)
    # Then memory went one accepted size up each time, and past 6144 the run fails with the reason
    assert seen == list(SERVERLESS_MEMORY_MB[1:])
    assert "6144" in after.remediation.reason


def test_a_mode_without_serverless_memory_cannot_step_it() -> None:
    after = plan(failed("next_memory_size", "F14"))
    assert after.remediation is not None and after.remediation.route == "fail"
    assert "no serverless memory size" in after.remediation.reason


def test_inference_component_memory_halves_down_to_1024() -> None:
    # Given MinMemoryRequiredInMb 6144 refused for lack of memory (F10), at each step
    seen, overrides = [], DeployOverrides(ic_min_memory_mb=6144)
    for number in range(1, 6):
        after = plan(
            failed(
                "lower_ic_memory",
                "F10",
                overrides=overrides,
                number=number,
                remediation={"lower_ic_memory": 5, "max_total_attempts": 10},
            )
        )
        assert after.remediation is not None
        if after.remediation.route == "fail":
            break
        overrides = after.attempt.overrides
        seen.append(overrides.ic_min_memory_mb)
    # Then it went 3072, 1536, 1024 (the field's working value), then failed at the floor
    assert seen == [3072, 1536, 1024]
    assert "floor of 1024" in after.remediation.reason


def test_a_missing_module_is_added_pinned_to_the_converted_onnxruntime_and_repacked() -> None:
    # Given every warmup call answered "No module named 'onnxruntime'" (F01)
    state = failed("add_requirement", "F01", details={"module": "onnxruntime"}, warmed=True)
    # When the remediation is planned
    after = plan(state)
    # Then the pipeline repacks with the pinned requirement, under a new attempt
    assert after.remediation is not None and after.remediation.route == "repack"
    assert after.attempt.overrides.extra_requirements == ["onnxruntime==1.31.1"]
    assert after.attempt.number == 2 and after.pack is None and after.convert == state.convert
    # And the same module missing again is not added twice
    again = state.model_copy(update={"attempt": after.attempt.model_copy(update={"number": 2})})
    again = plan(again.model_copy(update={"spec": fast_spec("bundled", remediation={"add_requirement": 2})}))
    assert again.remediation is not None and again.remediation.route == "fail"
    assert "was added already" in again.remediation.reason


def test_lmi_cpu_gets_its_whole_requirement_set() -> None:
    after = plan(failed("add_requirement", "F17", details={"module": "transformers"}, warmed=True))
    assert after.attempt.overrides.extra_requirements == [
        "transformers",
        "torch",
        "sentencepiece",
        "protobuf",
        "peft",
        "accelerate",
    ]


def test_first_call_timeouts_warm_every_shape_again_on_the_same_endpoint() -> None:
    # Given warmup failed on a TensorRT endpoint whose engine was compiling (F21)
    state = failed("warm_shapes", "F21", warmed=True).model_copy(
        update={"warmup": WarmupResult(shapes=[], seconds=1.0)}
    )
    # When the remediation is planned
    after = plan(state)
    # Then the same endpoint is warmed again: same attempt, deploy kept, warmup cleared
    assert after.remediation is not None and after.remediation.route == "warm"
    assert after.attempt.number == 1 and after.deploy == state.deploy and after.warmup is None


def test_no_capacity_retries_with_a_doubling_wait() -> None:
    state = failed("retry_with_backoff", "F12", warmed=True)
    waits = []
    for _ in range(3):
        state = plan(state)
        assert state.remediation is not None
        waits.append(state.remediation.wait_s)
        state = state.model_copy(
            update={
                "error": ErrorInfo(Error="WarmupFailed"),
                "diagnosis": failed("retry_with_backoff", "F12").diagnosis,
            }
        )
    assert waits == [30, 60, 120]


@pytest.mark.parametrize(
    ("action", "update", "reason"),
    [
        ("fail", {}, "no automatic fix for F06"),
        ("next_instance_type", {"diagnosis": None}, "no automatic fix for unknown"),
        ("single_worker", {"convert": None, "deploy": None, "endpoint": None}, "the convert step failed"),
    ],
)
def test_what_cannot_be_fixed_fails(action: str, update: dict[str, Any], reason: str) -> None:
    after = plan(failed(action).model_copy(update=update))
    assert after.remediation is not None and after.remediation.route == "fail"
    assert reason in after.remediation.reason
    assert after.attempt.history[-1].reason == after.remediation.reason
