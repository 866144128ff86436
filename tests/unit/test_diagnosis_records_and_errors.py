"""Diagnosis from what the run itself raised and from records (describe output, copy counts): the
run's own errors named, a timeout read by phase, the unknown reported with its evidence, facts over
time; and the rule table's ids against the catalogue."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from workflows.contracts import ErrorInfo
from workflows.diagnosis import Evidence, diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.rules import default_rules


def test_errors_raised_by_the_run_itself_are_named() -> None:
    cases = {
        (
            "ArtifactIncomplete",
            "model.onnx is 0 bytes, the manifest says 90430912: truncated or replaced (F22).",
        ): "F22",
        (
            "QuantizationCollapsed",
            "INT8 predictions collapsed: every prediction is 'neutral' on 32 texts",
        ): "F29",
        ("CapacityStall", "endpoint e on ml.g5.12xlarge is Creating with no ProductionVariants"): "F06",
        (
            "PreflightBlocked",
            "preflight found problems that would fail on AWS:\nF02 (blocking): each worker ...",
        ): "F02",
    }
    for (name, message), expected in cases.items():
        # Given the error as Step Functions records it (a Lambda error payload in Cause)
        evidence = Evidence()
        evidence.add_error(
            ErrorInfo(Error=name, Cause=f'{{"errorType": "{name}", "errorMessage": "{message}"}}')
        )
        # Then it is named
        assert diagnose(evidence).id == expected, name


def test_a_convert_step_timeout_is_f34_only_in_convert() -> None:
    # Given the convert Lambda timing out
    timeout = ErrorInfo(Error="States.Timeout", Cause="")
    in_convert = Evidence(phase="convert")
    in_convert.add_error(timeout)
    in_warmup = Evidence(phase="warmup")
    in_warmup.add_error(timeout)
    # Then it is the optimizer bound in convert, nothing known elsewhere
    assert diagnose(in_convert).id == "F34"
    assert diagnose(in_warmup).id == "unknown"


def test_unknown_failures_are_reported_with_their_evidence_never_forced() -> None:
    # Given an error no entry explains
    evidence = Evidence()
    evidence.add_error(
        ErrorInfo(
            Error="DeployRejected",
            Cause='{"errorType": "DeployRejected", "errorMessage": "create model m: ValidationException: the '
            'account is not enrolled for this model package"}',
        )
    )
    # When diagnosed
    diagnosis = diagnose(evidence)
    # Then it is unknown, says so, and quotes the error
    assert (diagnosis.id, diagnosis.action, diagnosis.confidence) == ("unknown", "fail", 0.0)
    assert "DeployRejected" in diagnosis.title
    assert any("not enrolled" in line for line in diagnosis.evidence)


def test_f06_from_describe_output_only_past_the_threshold() -> None:
    created = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)

    def described(status: str, minutes: float, variants: bool = False, reason: str | None = None) -> Evidence:
        endpoint: dict[str, object] = {
            "EndpointStatus": status,
            "CreationTime": created,
            "LastModifiedTime": created + timedelta(seconds=1),
        }
        if variants:
            endpoint["ProductionVariants"] = [{"VariantName": "AllTraffic", "CurrentInstanceCount": 1}]
        if reason is not None:
            endpoint["FailureReason"] = reason
        return Evidence(
            endpoint=endpoint, observed_at=created + timedelta(minutes=minutes), stall_threshold_s=600
        )

    # Given Creating, no variants, LastModifiedTime frozen 1 s after creation, for 12 min (threshold 10)
    stalled = diagnose(described("Creating", 12))
    # Then it is a capacity stall: next instance type, with the figures
    assert (stalled.id, stalled.action) == ("F06", "next_instance_type")
    assert stalled.details["frozen_min"] == "12.0"
    assert stalled.details["last_modified_after_creation_s"] == "1"
    # And the field's late form (Failed, empty FailureReason, no variants) is the same entry
    assert diagnose(described("Failed", 50, reason="")).id == "F06"
    # But 3 minutes of Creating, or Creating with an instance assigned, is no stall
    assert diagnose(described("Creating", 3)).id == "unknown"
    assert diagnose(described("Creating", 60, variants=True)).id == "unknown"


def test_f09_from_copy_counts() -> None:
    # Given an inference component InService with 1 of 2 copies placed, on one ml.g5.xlarge (one GPU)
    evidence = Evidence(
        instance_type="ml.g5.xlarge",
        inference_components=[
            {
                "InferenceComponentName": "ic-nli",
                "RuntimeConfig": {"DesiredCopyCount": 2, "CurrentCopyCount": 1},
            }
        ],
    )
    # Then F09 with the counts
    diagnosis = diagnose(evidence)
    assert diagnosis.id == "F09"
    assert diagnosis.details == {"component": "ic-nli", "desired": "2", "current": "1"}
    # With no instance type, the counts alone do not tell devices from memory
    assert diagnose(evidence.model_copy(update={"instance_type": None})).id == "unknown"


def test_every_rule_id_is_a_catalogue_entry_with_a_runtime_signature() -> None:
    # Given the catalogue entries with a runtime signature
    expected = {
        *(
            "F01",
            "F02",
            "F03",
            "F04",
            "F05",
            "F06",
            "F07",
            "F08",
            "F09",
            "F10",
            "F11",
            "F12",
            "F13",
            "F14",
            "F15",
            "F16",
        ),
        *(
            "F17",
            "F18",
            "F19",
            "F20",
            "F21",
            "F22",
            "F23",
            "F24",
            "F25",
            "F26",
            "F27",
            "F28",
            "F29",
            "F30",
            "F31",
            "F32",
            "F33",
            "F34",
        ),
        "F35",
        "F36",
        "F37",
        "F38",
        "F39",
        "F40",
    }
    # Then the rule table covers exactly those
    assert default_rules().ids() == expected


def test_a_describe_record_inside_a_states_input_is_read_as_a_record() -> None:
    # Given an execution history whose failing state's input carries the component's DescribeInferenceComponent
    component = {
        "InferenceComponentName": "nli-ic",
        "InferenceComponentStatus": "Failed",
        "FailureReason": "There is not enough memory available for this Inference Component",
        "RuntimeConfig": {"DesiredCopyCount": 1, "CurrentCopyCount": 0},
    }
    history = {
        "events": [
            {
                "type": "FailStateEntered",
                "id": 9,
                "stateEnteredEventDetails": {"name": "MarkFailed", "input": json.dumps({"ic": component})},
            },
            {"type": "ExecutionFailed", "id": 10, "executionFailedEventDetails": {"error": "IcFailed"}},
        ]
    }
    evidence = evidence_from_paste(json.dumps(history, indent=2), origin="history")
    # Then the record is the component's, and its failure reason names F10
    assert [c["InferenceComponentName"] for c in evidence.inference_components] == ["nli-ic"]
    assert diagnose(evidence).id == "F10"


def test_an_empty_list_of_scalable_targets_under_min_instances_zero_is_f11() -> None:
    config = "\n".join(
        [
            "$ aws sagemaker describe-endpoint-config --endpoint-config-name s2z-cfg --output yaml",
            "EndpointConfigName: s2z-cfg",
            "ProductionVariants:",
            "- InstanceType: ml.g6.xlarge",
            "  ManagedInstanceScaling:",
            "    MinInstanceCount: 0",
            "    MaxInstanceCount: 2",
            "    Status: ENABLED",
            "  VariantName: AllTraffic",
        ]
    )
    target = {
        "ServiceNamespace": "sagemaker",
        "ResourceId": "inference-component/emb-ic",
        "ScalableDimension": "sagemaker:inference-component:DesiredCopyCount",
        "MinCapacity": 0,
        "MaxCapacity": 2,
    }
    for targets, expected in (([], "F11"), ([target], "unknown")):
        # Given the config allowing zero instances and the scalable targets, as JSON on their own lines
        listed = json.dumps({"ScalableTargets": targets}, indent=4)
        evidence = evidence_from_paste(
            f"{config}\n$ aws application-autoscaling describe-scalable-targets\n{listed}", origin="t"
        )
        # Then no target on the copies is F11; a target on them is not
        assert diagnose(evidence).id == expected, targets
