"""``deploybench diagnose --traces``: an endpoint's traces log group read through CloudWatch Logs (moto),
paginated and bounded, its error responses turned into the evidence the diagnosis reads."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.support.aws import Aws
from workflows.cli.app import app
from workflows.diagnosis import diagnose
from workflows.diagnosis.evidence import Evidence
from workflows.diagnosis.traces import TRACES, add_trace_events, trace_record
from workflows.naming import endpoint_traces_log_group

ENDPOINT = "db-run-1-a1"
MISSING_ONNXRUNTIME = json.dumps(
    {"code": 400, "type": "InternalServerException", "message": "No module named 'onnxruntime'"}
)


def trace(status: int, latency_ms: float, body: str, request_id: str) -> str:
    return json.dumps(
        {
            "inferenceId": request_id,
            "statusCode": status,
            "latencyMs": latency_ms,
            "request": {"contentType": "application/json", "payload": '{"inputs": "a user text"}'},
            "response": {"contentType": "application/json", "payload": body},
        }
    )


def write_traces(logs: Any, messages: list[str], stream: str = "AllTraffic/i-0a1b2c3d") -> None:
    group = endpoint_traces_log_group(ENDPOINT)
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName=stream)
    now = int(time.time() * 1000)
    logs.put_log_events(
        logGroupName=group,
        logStreamName=stream,
        logEvents=[{"timestamp": now + i, "message": m} for i, m in enumerate(messages)],
    )


def since() -> datetime:
    return datetime.now(UTC) - timedelta(minutes=5)


def test_error_responses_become_invocation_evidence_and_successes_a_count(aws: Aws) -> None:
    # Given a traces group with two successes and one 400 whose body says onnxruntime is missing (F01)
    logs = aws.client("logs")
    write_traces(
        logs,
        [
            trace(200, 12.0, '{"embeddings": [[0.1]]}', "r-1"),
            trace(400, 35.0, MISSING_ONNXRUNTIME, "r-2"),
            trace(200, 14.0, '{"embeddings": [[0.2]]}', "r-3"),
        ],
    )
    evidence = Evidence()
    # When the traces are read
    read = add_trace_events(evidence, logs=logs, endpoint_name=ENDPOINT, since=since())
    # Then every record was read, the one error as an invocation text with its status, latency and body
    assert read == 3
    (item,) = evidence.items
    assert item.source == "invocation"
    assert item.text.startswith("InvokeEndpoint returned 400 in 35 ms:")
    assert "No module named 'onnxruntime'" in item.text
    assert item.origin == "AllTraffic/i-0a1b2c3d r-2"
    # And the successes are counted in a note with the latency the traces show, the form named
    assert any(
        "3 sampled requests (2 x 200, 1 x 400); latency p50 14 ms, max 35 ms (n=3)" in n
        for n in evidence.notes
    )
    assert evidence.forms == [TRACES]
    # And the diagnosis names the missing module from the endpoint's own view
    assert diagnose(evidence).id == "F01"


def test_the_read_is_paginated_and_bounded(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given more traces than one page holds, and a bound under their count
    import workflows.diagnosis.log_groups as log_groups
    import workflows.diagnosis.traces as traces

    monkeypatch.setattr(log_groups, "PAGE_LIMIT", 2)
    monkeypatch.setattr(traces, "MAX_TRACE_EVENTS", 5)
    logs = aws.client("logs")
    write_traces(logs, [trace(500, 10.0 + i, "Worker died.", f"r-{i}") for i in range(8)])
    evidence = Evidence()
    # When read
    read = add_trace_events(evidence, logs=logs, endpoint_name=ENDPOINT, since=since())
    # Then it followed the pages up to the bound and said it stopped there
    assert read == 5
    assert len(evidence.items) == 5
    assert any("read the first 5 events only" in note for note in evidence.notes)


def test_an_endpoint_without_tracing_is_a_note_not_a_failure(aws: Aws) -> None:
    evidence = Evidence()
    read = add_trace_events(evidence, logs=aws.client("logs"), endpoint_name="untraced", since=since())
    assert read == 0 and evidence.items == []
    assert any(
        "no log group /aws/sagemaker/Endpoints/untraced/traces" in n and "hosting.tracing" in n
        for n in evidence.notes
    )


def test_a_record_that_is_not_json_is_read_as_a_log_line(aws: Aws) -> None:
    logs = aws.client("logs")
    write_traces(logs, ["Backend worker process died."])
    evidence = Evidence()
    add_trace_events(evidence, logs=logs, endpoint_name=ENDPOINT, since=since())
    assert [(i.source, i.text) for i in evidence.items] == [("logs", "Backend worker process died.")]
    assert any("1 not JSON" in note for note in evidence.notes)


@pytest.mark.parametrize(
    ("message", "status", "latency", "error"),
    [
        ('{"StatusCode": "503", "Response": {"Body": "overloaded"}, "DurationMs": 7}', 503, 7.0, True),
        ('{"status": 200, "latency": 9.5}', 200, 9.5, False),
        ('{"error": "ModelError: worker timeout"}', None, None, True),
        ("[1, 2]", None, None, None),
    ],
)
def test_records_are_read_by_what_they_carry(
    message: str, status: int | None, latency: float | None, error: bool | None
) -> None:
    record = trace_record(message)
    if error is None:
        assert record is None
        return
    assert record is not None
    assert (record.status, record.latency_ms, record.error) == (status, latency, error)


def test_diagnose_traces_on_the_command_line_names_the_failure_from_the_endpoints_view(aws: Aws) -> None:
    # Given a traced endpoint whose one error response says onnxruntime is missing
    write_traces(
        aws.client("logs"), [trace(200, 12.0, "{}", "r-1"), trace(400, 35.0, MISSING_ONNXRUNTIME, "r-2")]
    )
    # When diagnosed from its traces alone
    result = CliRunner().invoke(app, ["diagnose", "--traces", ENDPOINT, "--region", "us-east-1", "--json"])
    # Then F01, with the traced response quoted and the count of what was read as a note
    assert result.exit_code == 0, result.output
    diagnosis = json.loads(result.output)
    assert diagnosis["id"] == "F01"
    assert any("InvokeEndpoint returned 400 in 35 ms" in line for line in diagnosis["evidence"])
    assert any("2 sampled requests (1 x 200, 1 x 400)" in line for line in diagnosis["evidence"])


def test_diagnose_traces_of_an_untraced_endpoint_exits_2_saying_why(aws: Aws) -> None:
    result = CliRunner().invoke(app, ["diagnose", "--traces", "untraced", "--region", "us-east-1"])
    assert result.exit_code == 2
    assert "the endpoint traces nothing" in result.output
