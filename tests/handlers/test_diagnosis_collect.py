"""Evidence collection from the pipeline state, moto's SageMaker and CloudWatch Logs; the handler."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fast_spec
from tests.support.aws import Aws
from tests.support.diagnosis import create_endpoint, write_logs
from workflows import clock
from workflows.contracts import (
    ConvertResult,
    DeployResult,
    EndpointStatus,
    ErrorInfo,
    PackResult,
    PipelineState,
    PreflightResult,
)
from workflows.conversion.manifest import read_manifest
from workflows.diagnosis import diagnose_failure, evidence_from_state
from workflows.diagnosis.collect import MAX_LOG_EVENTS, failed_phase, log_group
from workflows.local.lambda_seam import LocalLambdaContext

WORKER_DIED = [
    "2026-11-29T10:05:09,512 [INFO ] W-9000-model-stdout com.amazonaws.ml.mms.wlm.WorkerLifeCycle - "
    "model_fn implementation found. It will be used in place of the default one.",
    "2026-11-29T10:05:11,002 [WARN ] W-9000-model com.amazonaws.ml.mms.wlm.WorkerThread - Backend worker process died.",
    "2026-11-29T10:05:11,004 [WARN ] W-9000-model com.amazonaws.ml.mms.wlm.BatchAggregator - Load model failed: "
    "model, error: Worker died.",
]


def warmup_failure(endpoint: str) -> ErrorInfo:
    message = (
        f"shape b1/natural on {endpoint} failed all 20 warmup requests: {{'ModelError': 20}}. Last error: "
        'ModelError: Received server error (500) from primary with message "{"code": 500, "type": '
        '"InternalServerException", "message": "Worker died."}"'
    )
    return ErrorInfo(
        Error="WarmupFailed", Cause=json.dumps({"errorType": "WarmupFailed", "errorMessage": message})
    )


def state_after_warmup_failure(deploy: DeployResult, **spec: Any) -> PipelineState:
    state = PipelineState(run_id="diag-1", spec=fast_spec("bundled", **spec))
    return state.model_copy(
        update={
            "convert": None,
            "deploy": deploy,
            "endpoint": EndpointStatus(status="InService", has_variants=True),
            "error": warmup_failure(deploy.endpoint_name),
        }
    )


def test_worker_death_in_the_endpoint_logs_is_f02_with_the_log_lines(aws: Aws) -> None:
    sagemaker, logs = aws.sagemaker, aws.logs
    # Given a real-time endpoint whose workers died, as its CloudWatch log group shows
    deploy = create_endpoint(sagemaker, "db-diag-1-a1")
    write_logs(logs, deploy.endpoint_name, WORKER_DIED)
    state = state_after_warmup_failure(deploy)
    # When the failure is diagnosed with the live clients
    diagnosis = diagnose_failure(state, sagemaker=sagemaker, logs=logs)
    # Then it is F02, single worker, and the evidence quotes the log stream
    assert (diagnosis.id, diagnosis.action) == ("F02", "single_worker")
    assert any(
        line.startswith("[logs primary/i-0a1b2c3d]") and "Worker died" in line for line in diagnosis.evidence
    )


def test_the_same_logs_on_serverless_are_f14(aws: Aws) -> None:
    sagemaker, logs = aws.sagemaker, aws.logs
    # Given the same worker deaths, but the execution says the endpoint is serverless
    deploy = create_endpoint(sagemaker, "db-diag-2-a1")
    write_logs(logs, deploy.endpoint_name, WORKER_DIED)
    state = state_after_warmup_failure(deploy)
    evidence = evidence_from_state(state, sagemaker=sagemaker, logs=logs)
    evidence.hosting_mode = "serverless"
    # When diagnosed
    from workflows.diagnosis import diagnose

    diagnosis = diagnose(evidence)
    # Then it is F14: next memory size
    assert (diagnosis.id, diagnosis.action) == ("F14", "next_memory_size")


def test_missing_log_group_is_a_note_not_a_failure(aws: Aws) -> None:
    sagemaker, logs = aws.sagemaker, aws.logs
    # Given an endpoint that never wrote a log
    deploy = create_endpoint(sagemaker, "db-diag-3-a1")
    state = state_after_warmup_failure(deploy)
    # When its evidence is gathered
    evidence = evidence_from_state(state, sagemaker=sagemaker, logs=logs)
    # Then the absence is noted, the endpoint described, the failing step known
    assert any(log_group(deploy.endpoint_name) in note for note in evidence.notes)
    assert evidence.endpoint is not None and evidence.endpoint["EndpointStatus"] == "InService"
    assert evidence.instance_type == "ml.c5.xlarge"
    # And the diagnosis (from the error text alone) still names F02 and carries the note
    diagnosis = diagnose_failure(state, sagemaker=sagemaker, logs=logs)
    assert diagnosis.id == "F02"
    assert any(line.startswith("[note] no log group") for line in diagnosis.evidence)


def test_a_deleted_endpoint_falls_back_to_the_last_poll(aws: Aws) -> None:
    sagemaker, logs = aws.sagemaker, aws.logs
    # Given the wait loop's last poll: Creating, no variants, LastModifiedTime 1 s after creation, 12 min ago
    created = clock.now() - timedelta(minutes=12)
    deploy = DeployResult(
        endpoint_name="db-gone-a1",
        endpoint_config_name="db-gone-a1",
        model_names=[],
        instance_type="ml.g5.12xlarge",
        created_at=created,
    )
    poll = EndpointStatus(
        status="Creating",
        creation_time=created,
        last_modified_time=created + timedelta(seconds=1),
        has_variants=False,
        waited_s=720,
    )
    state = PipelineState(run_id="gone", spec=fast_spec("bundled")).model_copy(
        update={"deploy": deploy, "endpoint": poll, "error": ErrorInfo(Error="EndpointWaitTimeout", Cause="")}
    )
    # When diagnosed while the endpoint no longer exists
    diagnosis = diagnose_failure(state, sagemaker=sagemaker, logs=logs)
    # Then the poll's facts make it a capacity stall, and the evidence says where they came from
    assert (diagnosis.id, diagnosis.action) == ("F06", "next_instance_type")
    assert any("last poll" in line for line in diagnosis.evidence)
    assert any("does not exist" in line for line in diagnosis.evidence)


def test_log_reading_is_bounded(aws: Aws) -> None:
    sagemaker, logs = aws.sagemaker, aws.logs
    # Given a chatty endpoint with more events than a diagnosis reads
    deploy = create_endpoint(sagemaker, "db-diag-4-a1")
    lines = [
        f'[INFO ] ACCESS_LOG - /10.0.0.1:{i} "GET /ping HTTP/1.1" 200 0' for i in range(MAX_LOG_EVENTS + 300)
    ]
    group = log_group(deploy.endpoint_name)
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName="s")
    now = int(time.time() * 1000)
    for start in range(0, len(lines), 1000):
        chunk = lines[start : start + 1000]
        logs.put_log_events(
            logGroupName=group,
            logStreamName="s",
            logEvents=[{"timestamp": now + start + i, "message": m} for i, m in enumerate(chunk)],
        )
    # When evidence is gathered
    evidence = evidence_from_state(state_after_warmup_failure(deploy), sagemaker=sagemaker, logs=logs)
    # Then at most MAX_LOG_EVENTS events were read
    assert len([i for i in evidence.items if i.source == "logs"]) == MAX_LOG_EVENTS


def test_failed_phase_is_the_first_missing_result(tiny_artifact: Path) -> None:
    # Given the results of each step as the pipeline fills them in
    manifest = read_manifest(tiny_artifact)
    done = {
        "convert": ConvertResult(staging_uri="s3://b/staging/p/", manifest=manifest, seconds=1.0),
        "pack": PackResult(
            model_data_uri="s3://b/a/model.tar.gz",
            size_bytes=1,
            sha256="0" * 64,
            compression="none",
            seconds=1,
        ),
        "preflight": PreflightResult(),
        "deploy": create_deploy_result(),
        "endpoint": EndpointStatus(status="InService", has_variants=True),
    }
    state = PipelineState(run_id="p", spec=fast_spec("bundled"))
    phases = [failed_phase(state)]
    for key, value in done.items():
        state = state.model_copy(update={key: value})
        phases.append(failed_phase(state))
    # Then the phase is the step after the last result
    assert phases == ["convert", "pack", "preflight", "deploy", "wait", "warmup"]
    # And an endpoint still Creating means the wait loop failed
    creating = state.model_copy(update={"endpoint": EndpointStatus(status="Creating")})
    assert failed_phase(creating) == "wait"


def create_deploy_result() -> DeployResult:
    return DeployResult(
        endpoint_name="e",
        endpoint_config_name="e",
        model_names=["m"],
        instance_type="ml.c6i.xlarge",
        created_at=clock.now(),
    )


def test_the_handler_returns_the_diagnosis_the_state_machine_branches_on(
    aws: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lambdas.clients
    from lambdas.diagnose_failure import handler
    from lambdas.observability import metrics

    sagemaker, logs = aws.sagemaker, aws.logs
    lambdas.clients.clear()
    monkeypatch.setattr(lambdas.clients, "sagemaker", lambda: sagemaker)
    monkeypatch.setattr(lambdas.clients, "logs", lambda: logs)
    monkeypatch.setattr(metrics, "namespace", metrics.namespace or "deploybench")
    # Given the execution state DiagnoseFailure receives after a warmup failure
    deploy = create_endpoint(sagemaker, "db-diag-5-a1")
    write_logs(logs, deploy.endpoint_name, WORKER_DIED)
    event = state_after_warmup_failure(deploy).model_dump(mode="json")
    context = LocalLambdaContext(
        function_name="deploybench-diagnose-failure",
        invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:deploybench-diagnose-failure",
        memory_limit_in_mb=512,
        timeout_s=60,
    )
    # When the handler runs
    result = handler(event, context)
    # Then its output is the Diagnosis contract with the action to branch on
    assert result["id"] == "F02"
    assert result["action"] == "single_worker"
    assert set(result) == {
        "id",
        "title",
        "evidence",
        "action",
        "confidence",
        "fix",
        "details",
        "alternatives",
    }
