"""What a remediation changes: the hosting a mode deploys, the repacked requirements, the failed
attempt's resources, the result and the report; and the MMS error bytes the diagnosis reads."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from tests.conftest import fast_spec
from tests.support.aws import Aws
from workflows.contracts import (
    AttemptRequest,
    DeployAttempt,
    DeployOverrides,
    ErrorInfo,
    RemediationRecord,
)
from workflows.naming import endpoint_config_name, endpoint_name, model_name

ROLE = "arn:aws:iam::123456789012:role/sm"
AT = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


# --- overrides --------------------------------------------------------------------------------


def test_the_realtime_mode_applies_the_overrides_that_concern_it() -> None:
    from workflows.remediation.overrides import with_overrides

    # Given a real-time hosting with 8 workers and overrides from F02 and F20, plus a serverless one
    hosting = fast_spec("bundled", hosting={"workers": 8, "ort_intra_op_threads": 4}).hosting
    overrides = DeployOverrides(
        workers=1, ort_intra_op_threads=0, inference_ami_version="al2-ami-sagemaker-inference-gpu-3-1",
        serverless_memory_mb=4096,
    )  # fmt: skip
    # When the next attempt's hosting is built
    applied = with_overrides(hosting, overrides)
    # Then the real-time fields changed and the serverless one, which it has not, is ignored
    assert (applied.workers, applied.ort_intra_op_threads) == (1, 0)
    assert applied.inference_ami_version == "al2-ami-sagemaker-inference-gpu-3-1"
    assert applied.instance_type_fallbacks == hosting.instance_type_fallbacks
    assert not hasattr(applied, "memory_size_mb")
    # And no override leaves the spec's hosting as it is
    assert with_overrides(hosting, DeployOverrides()) is hosting


def test_an_override_out_of_the_field_range_is_refused_before_any_aws_call() -> None:
    from pydantic import ValidationError

    from workflows.remediation.overrides import with_overrides

    with pytest.raises(ValidationError, match="workers"):
        with_overrides(fast_spec("bundled").hosting, DeployOverrides(workers=0))


# --- requirements -----------------------------------------------------------------------------


def test_added_requirements_go_into_the_artifact_and_its_manifest(
    tiny_artifact: Path, tmp_path: Path
) -> None:
    from workflows.conversion.manifest import read_manifest, verify_files
    from workflows.remediation.requirements import apply_requirements

    # Given a verified artifact folder
    root = tmp_path / "artifact"
    shutil.copytree(tiny_artifact, root)
    before = (root / "code" / "requirements.txt").read_text()
    # When flatbuffers and an already-present onnxruntime are added
    added = apply_requirements(root, ["flatbuffers", "onnxruntime==1.0"])
    # Then only the new line was appended, and the manifest still verifies the folder (F22)
    assert added == ["flatbuffers"]
    assert (root / "code" / "requirements.txt").read_text() == before + "flatbuffers\n"
    verify_files(root, read_manifest(root))
    # And adding it again changes nothing
    assert apply_requirements(root, ["flatbuffers"]) == []


def test_requirements_for_a_module_name_its_distribution() -> None:
    from workflows.remediation.requirements import requirements_for

    assert requirements_for("onnxruntime.capi", diagnosis_id="F01", onnxruntime_version="1.31.1") == [
        "onnxruntime==1.31.1"
    ]
    assert requirements_for("sklearn", diagnosis_id="F01", onnxruntime_version=None) == ["scikit-learn"]
    assert requirements_for("google.protobuf", diagnosis_id="F01", onnxruntime_version=None) == ["protobuf"]
    assert "peft" in requirements_for("peft", diagnosis_id="F17", onnxruntime_version=None)


# --- removal of the failed attempt -------------------------------------------------------------


@pytest.fixture
def sagemaker(aws: Aws) -> Any:
    return aws.sagemaker


def create_attempt(sagemaker: Any, run_id: str, attempt: int) -> None:
    model = model_name(run_id, attempt)
    sagemaker.create_model(ModelName=model, PrimaryContainer={"Image": "img"}, ExecutionRoleArn=ROLE)
    sagemaker.create_endpoint_config(
        EndpointConfigName=endpoint_config_name(run_id, attempt),
        ProductionVariants=[
            {
                "VariantName": "primary",
                "ModelName": model,
                "InstanceType": "ml.c5.xlarge",
                "InitialInstanceCount": 1,
            }
        ],
    )
    sagemaker.create_endpoint(
        EndpointName=endpoint_name(run_id, attempt), EndpointConfigName=endpoint_config_name(run_id, attempt)
    )


def record(attempt: int, **fields: Any) -> RemediationRecord:
    base: dict[str, Any] = {
        "attempt": attempt,
        "action": "single_worker",
        "diagnosis_id": "F02",
        "diagnosis_title": "worker died",
        "confidence": 0.85,
        "applied": True,
        "reason": "redeploy",
        "at": AT,
    }
    return RemediationRecord(**{**base, **fields})


def test_the_failed_attempt_is_removed_and_the_others_stay(sagemaker: Any) -> None:
    from workflows.remediation.removal import remove_failed_attempt

    # Given attempts 1 and 10 of a run (names that share a prefix), and attempt 1 failed
    create_attempt(sagemaker, "rm-1", 1)
    create_attempt(sagemaker, "rm-1", 10)
    request = AttemptRequest(
        run_id="rm-1", spec=fast_spec("bundled"), attempt=DeployAttempt(number=2, history=[record(1)])
    )
    # When the failed attempt is removed
    attempt = remove_failed_attempt(request, sagemaker=sagemaker)
    # Then its endpoint, config and model are gone, recorded, and attempt 10's are untouched
    assert attempt.history[-1].removed == [
        "endpoint/db-rm-1-a1",
        "endpoint-config/db-rm-1-a1",
        "model/db-rm-1-a1-m0",
    ]
    assert attempt.history[-1].left == []
    assert [e["EndpointName"] for e in sagemaker.list_endpoints()["Endpoints"]] == ["db-rm-1-a10"]
    assert [m["ModelName"] for m in sagemaker.list_models()["Models"]] == ["db-rm-1-a10-m0"]


def test_an_endpoint_still_creating_is_left_with_its_config_for_teardown() -> None:
    from workflows.remediation.removal import remove_failed_attempt

    # Given SageMaker refusing to delete the stalled endpoint (F06: it is still Creating)
    client = boto3.client(
        "sagemaker", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s"
    )
    created = datetime(2026, 1, 1, tzinfo=UTC)
    with Stubber(client) as stub:
        # (the endpoint exists: the attempt created it)
        stub.add_response(
            "list_endpoints",
            {
                "Endpoints": [
                    {
                        "EndpointName": "db-st-1-a1",
                        "EndpointArn": "arn:aws:sagemaker:us-east-1:1:endpoint/db-st-1-a1",
                        "CreationTime": created,
                        "LastModifiedTime": created,
                        "EndpointStatus": "Creating",
                    }
                ]
            },
            {"NameContains": "db-st-1-a1"},
        )
        stub.add_client_error(
            "delete_endpoint",
            service_error_code="ValidationException",
            service_message='Cannot delete in-progress endpoint "arn:aws:sagemaker:us-east-1:1:endpoint/db-st-1-a1".',
            expected_params={"EndpointName": "db-st-1-a1"},
        )
        request = AttemptRequest(
            run_id="st-1", spec=fast_spec("bundled"), attempt=DeployAttempt(number=2, history=[record(1)])
        )
        # When the failed attempt is removed
        attempt = remove_failed_attempt(request, sagemaker=client)
        # Then nothing else was called (the stub would refuse it), and what was left is recorded
        stub.assert_no_pending_responses()
    assert attempt.history[-1].removed == []
    assert attempt.history[-1].left[0] == "endpoint/db-st-1-a1 (busy, teardown retries it)"
    assert len(attempt.history[-1].left) == 3


# --- result and report ------------------------------------------------------------------------


def test_the_result_shows_the_final_configuration_and_the_report_every_attempt() -> None:
    from workflows.contracts import DeployResult, PipelineState
    from workflows.reports.markdown import render_report
    from workflows.reports.result import pipeline_result

    # Given a run that stalled on c6i.xlarge (left for teardown), then had a worker die on c6i.2xlarge
    stall = record(
        1,
        action="next_instance_type",
        diagnosis_id="F06",
        diagnosis_title="capacity stall",
        evidence=["[error] CapacityStall: endpoint db-rep-1-a1 is Creating with no ProductionVariants"],
        instance_type="ml.c6i.xlarge",
        endpoint_name="db-rep-1-a1",
        endpoint_created_at=AT,
        at=AT + timedelta(minutes=8),
        waited_s=480.0,
        polls=9,
        left=["endpoint/db-rep-1-a1 (busy, teardown retries it)"],
        changes=[{"setting": "instance_type", "before": "ml.c6i.xlarge", "after": "ml.c6i.2xlarge"}],
    )
    worker = record(
        2,
        instance_type="ml.c6i.2xlarge",
        endpoint_created_at=AT + timedelta(minutes=8),
        at=AT + timedelta(minutes=14),
        removed=["endpoint/db-rep-1-a2"],
        changes=[{"setting": "workers", "before": 8, "after": 1}],
    )
    spec = fast_spec("bundled", hosting={"workers": 8})
    state = PipelineState(
        run_id="rep-1",
        spec=spec,
        attempt=DeployAttempt(
            number=3, instance_type_index=1, overrides=DeployOverrides(workers=1), history=[stall, worker]
        ),
        deploy=DeployResult(
            endpoint_name="db-rep-1-a3",
            endpoint_config_name="db-rep-1-a3",
            model_names=["db-rep-1-a3-m0"],
            instance_type="ml.c6i.2xlarge",
            created_at=AT + timedelta(minutes=15),
        ),
    )
    # When the result and the report are written
    result = json.loads(json.dumps(pipeline_result(state, "SUCCEEDED", detail=None, cloudwatch={})))
    report = render_report(result)
    # Then the result's hosting is what the last attempt deployed
    assert result["hosting"]["workers"] == 1
    assert result["hosting"]["instance_type"] == "ml.c6i.2xlarge"
    assert result["hosting"]["attempts"] == 3
    # And the earlier endpoints are costed: the stalled one until the end (an upper bound), the other to its removal
    items = [line["item"] for line in result["cost"]["lines"]]
    assert "attempt 1 endpoint ml.c6i.xlarge × 1 (F06)" in items
    worker_line = next(line for line in result["cost"]["lines"] if line["item"].startswith("attempt 2 "))
    assert worker_line["quantity"] == pytest.approx(6 / 60, abs=1e-6)
    # And the report lists each diagnosed failure with what changed
    assert "## Remediation" in report
    assert "instance_type: ml.c6i.xlarge → ml.c6i.2xlarge" in report
    assert "workers: 8 → 1" in report
    assert "endpoint/db-rep-1-a1 (busy, teardown retries it)" in report


def test_a_run_without_remediation_has_no_remediation_section() -> None:
    from workflows.contracts import PipelineState
    from workflows.reports.markdown import render_report
    from workflows.reports.result import pipeline_result

    result = pipeline_result(
        PipelineState(run_id="plain-1", spec=fast_spec("bundled")), "FAILED", detail=None, cloudwatch={}
    )
    assert "## Remediation" not in render_report(json.loads(json.dumps(result)))


# --- the bytes MMS answers with ---------------------------------------------------------------


def mms_model_error(message: str) -> str:
    """A warmup failure as the pipeline catches it: MMS's body (Gson-escaped, byte for byte, from the
    light server that copies it) inside SageMaker's ModelError, inside the Lambda error payload."""
    from workflows.local.sagemaker.light_server import _error_body

    body = _error_body(message).decode("utf-8")
    model_error = (
        f'Received client error (400) from primary with message "{body}". See https://us-east-1.console.aws.'
        "amazon.com/cloudwatch/home?region=us-east-1#logEventViewer:group=/aws/sagemaker/Endpoints/db-x-a1 in "
        "account 123456789012 for more information."
    )
    error = f"shape b1/natural on db-x-a1 failed all 20 warmup requests: {{'ModelError': 20}}. Last error: {model_error}"
    return json.dumps({"errorType": "WarmupFailed", "errorMessage": error, "stackTrace": []})


@pytest.mark.parametrize(
    ("message", "entry", "details"),
    [
        ("No module named 'onnxruntime'", "F01", {"module": "onnxruntime"}),
        ("No module named 'flatbuffers'", "F01", {"module": "flatbuffers"}),
        (
            "optimum-onnx 0.1 depends on transformers>=4.36,<4.58",
            "F28",
            {},
        ),
    ],
)
def test_mms_escaped_error_bodies_are_diagnosed(message: str, entry: str, details: dict[str, str]) -> None:
    from workflows.diagnosis import diagnose
    from workflows.diagnosis.evidence import Evidence

    # Given the real bytes: ' < > = escaped as \\u0027 \\u003c \\u003e \\u003d
    cause = mms_model_error(message)
    assert "\\\\u0027" in cause or "\\\\u003c" in cause
    evidence = Evidence(phase="warmup", hosting_mode="realtime")
    # When the caught error is diagnosed
    evidence.add_error(ErrorInfo(Error="WarmupFailed", Cause=cause))
    diagnosis = diagnose(evidence)
    # Then the entry and its details are found as in the unescaped text
    assert diagnosis.id == entry
    assert details.items() <= diagnosis.details.items()
