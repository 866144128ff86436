"""``deploybench diagnose --events/--cloudtrail``: an endpoint's capacity failure read from the records AWS keeps
of it (EventBridge's state-change events, CloudTrail's calls), recorded in the shapes AWS documents."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tests.support.hosting import stubbed
from workflows.cli.app import app
from workflows.diagnosis import diagnose
from workflows.diagnosis.capacity_events import add_capacity_events, add_cloudtrail_events
from workflows.diagnosis.envelopes import CLOUDTRAIL, EVENT
from workflows.diagnosis.evidence import Evidence

ENDPOINT = "db-run-1-a1"
ARN = f"arn:aws:sagemaker:us-west-2:111122223333:endpoint/{ENDPOINT}"
CREATED = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)


def state_change(
    status: str, at: datetime, *, reason: str | None = None, endpoint: str = ENDPOINT
) -> dict[str, Any]:
    """An EventBridge 'SageMaker Endpoint State Change' event: statuses upper-case, times in epoch ms."""
    detail: dict[str, Any] = {
        "EndpointName": endpoint,
        "EndpointArn": f"arn:aws:sagemaker:us-west-2:111122223333:endpoint/{endpoint}",
        "EndpointConfigName": endpoint,
        "EndpointStatus": status,
        "CreationTime": int(CREATED.timestamp() * 1000),
        "LastModifiedTime": int((CREATED + timedelta(seconds=1)).timestamp() * 1000),
        "Tags": {},
    }
    if reason is not None:
        detail["FailureReason"] = reason
    return {
        "version": "0",
        "id": "0bd4a141-0a02-9d8a-f977-3924c3fb259c",
        "detail-type": "SageMaker Endpoint State Change",
        "source": "aws.sagemaker",
        "account": "111122223333",
        "time": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": "us-west-2",
        "resources": [detail["EndpointArn"]],
        "detail": detail,
    }


def trail_record(
    operation: str, *, error: tuple[str, str] | None = None, endpoint: str = ENDPOINT
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "eventVersion": "1.08",
        "userIdentity": {"type": "AssumedRole", "arn": "arn:aws:sts::111122223333:assumed-role/deploy/x"},
        "eventTime": "2026-11-29T09:00:00Z",
        "eventSource": "sagemaker.amazonaws.com",
        "eventName": operation,
        "awsRegion": "us-west-2",
        "requestParameters": {"endpointName": endpoint, "endpointConfigName": endpoint},
        "responseElements": None,
        "eventType": "AwsApiCall",
    }
    if error:
        record["errorCode"], record["errorMessage"] = error
    return record


def test_a_creating_then_failed_series_with_an_empty_reason_reads_as_the_capacity_stall() -> None:
    # Given the events a rule delivered: Creating, then Failed 50 minutes later with an empty reason (F06),
    # one event of another endpoint among them, as JSON lines
    events = [
        state_change("CREATING", CREATED + timedelta(seconds=2)),
        state_change("CREATING", CREATED, endpoint="prod-other"),
        state_change("FAILED", CREATED + timedelta(minutes=50), reason=""),
    ]
    evidence = Evidence()
    # When read for the endpoint
    read = add_capacity_events(
        evidence, "\n".join(json.dumps(e) for e in events), origin="events.jsonl", endpoint_name=ENDPOINT
    )
    # Then its two state changes are the endpoint's observed series, the other endpoint's skipped
    assert read == 2
    assert [(p.status, p.variants, p.reason) for p in evidence.polls] == [
        ("Creating", None, None),
        ("Failed", None, None),
    ]
    assert evidence.forms == [EVENT]
    assert any("1 events skipped" in note for note in evidence.notes)
    # And the diagnosis is F06
    assert diagnose(evidence).id == "F06"


def test_a_failed_event_with_aws_capacity_words_is_read_as_the_endpoints_failure_reason() -> None:
    # Given a lookup of events in a JSON list, the failure naming the capacity AWS could not provision
    reason = (
        "Unable to provision requested ML compute capacity. Please retry using a different ML instance type."
    )
    events = [state_change("FAILED", CREATED + timedelta(minutes=9), reason=reason)]
    evidence = Evidence()
    add_capacity_events(evidence, json.dumps(events), origin="events.json", endpoint_name=None)
    # Then the reason is a describe text, the endpoint Failed with it, and the diagnosis F06
    assert [(i.source, i.text) for i in evidence.items] == [("describe", reason)]
    assert evidence.endpoint is not None and evidence.endpoint["FailureReason"] == reason
    assert diagnose(evidence).id == "F06"


def test_a_refused_create_in_lookup_events_output_reads_as_the_quota() -> None:
    # Given `aws cloudtrail lookup-events` output: the refused CreateEndpoint (newest first) and the config's create
    quota = (
        "The account-level service limit 'ml.g5.xlarge for endpoint usage' is 0 Instances, with current "
        "utilization of 0 Instances and a request delta of 1 Instances."
    )
    output = {
        "Events": [
            {"EventId": "2", "EventName": "CreateEndpoint", "CloudTrailEvent": json.dumps(
                trail_record("CreateEndpoint", error=("ResourceLimitExceeded", quota)))},
            {"EventId": "1", "EventName": "CreateEndpointConfig", "CloudTrailEvent": json.dumps(
                trail_record("CreateEndpointConfig"))},
        ]
    }  # fmt: skip
    evidence = Evidence()
    read = add_capacity_events(evidence, json.dumps(output), origin="lookup.json", endpoint_name=ENDPOINT)
    # Then both calls were read, the refused one as the error the caller got
    assert read == 2 and evidence.forms == [CLOUDTRAIL]
    (item,) = evidence.items
    assert item.source == "error"
    assert item.text.startswith(
        "An error occurred (ResourceLimitExceeded) when calling the CreateEndpoint operation"
    )
    assert diagnose(evidence).id == "F39"


def test_cloudtrail_lookup_events_is_paginated_and_read_oldest_first() -> None:
    # Given LookupEvents answering two pages for the endpoint (botocore's output shape), newest first
    since = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)
    first = {"Events": [{"EventId": "3", "CloudTrailEvent": json.dumps(trail_record(
        "CreateEndpoint", error=("InsufficientInstanceCapacity", "no capacity for ml.g5.12xlarge")))}],
        "NextToken": "t1"}  # fmt: skip
    second = {
        "Events": [{"EventId": "1", "CloudTrailEvent": json.dumps(trail_record("CreateEndpointConfig"))}]
    }
    asked = {
        "LookupAttributes": [{"AttributeKey": "ResourceName", "AttributeValue": ENDPOINT}],
        "StartTime": since,
        "MaxResults": 50,
    }
    evidence = Evidence()
    with stubbed("cloudtrail") as (cloudtrail, stub):
        stub.add_response("lookup_events", first, asked)
        stub.add_response("lookup_events", second, {**asked, "NextToken": "t1"})
        # When the endpoint's calls are read
        read = add_cloudtrail_events(evidence, cloudtrail=cloudtrail, endpoint_name=ENDPOINT, since=since)
    # Then both pages were read, and the refused call is the error text F06's words match
    assert read == 2
    assert [i.text.split(" when")[0] for i in evidence.items] == [
        "An error occurred (InsufficientInstanceCapacity)"
    ]
    assert diagnose(evidence).id == "F06"


def test_no_calls_in_cloudtrail_is_a_note() -> None:
    evidence = Evidence()
    with stubbed("cloudtrail") as (cloudtrail, stub):
        stub.add_response("lookup_events", {"Events": []})
        add_cloudtrail_events(evidence, cloudtrail=cloudtrail, endpoint_name=ENDPOINT, since=CREATED)
    assert evidence.items == [] and any("CloudTrail has no SageMaker calls" in n for n in evidence.notes)


def test_diagnose_events_on_the_command_line_beside_a_pasted_log(tmp_path: Path) -> None:
    # Given the EventBridge events of a stalled create, and a pasted note that says nothing more
    events = tmp_path / "events.json"
    events.write_text(
        json.dumps(
            [state_change("CREATING", CREATED), state_change("FAILED", CREATED + timedelta(minutes=50))]
        ),
        encoding="utf-8",
    )
    note = tmp_path / "note.txt"
    note.write_text("deploy of db-run-1-a1 did not come up", encoding="utf-8")
    # When both are diagnosed together for the endpoint
    args = ["diagnose", "--log", str(note), "--events", str(events), "--json"]
    result = CliRunner().invoke(app, args)
    # Then the events' series names the capacity stall
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["id"] == "F06"


def test_diagnose_with_no_source_at_all_is_refused_naming_every_source() -> None:
    result = CliRunner().invoke(app, ["diagnose"])
    assert result.exit_code == 2
    assert "exactly one of --endpoint NAME or --log FILE" in result.output
    assert "--traces" in result.output and "--events" in result.output
