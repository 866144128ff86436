from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from tests.conftest import fast_spec
from workflows import clock
from workflows.contracts import DeployResult, DescribeRequest, EndpointStatus
from workflows.errors import CapacityStall, EndpointFailed, EndpointWaitTimeout
from workflows.hosting.polling import next_wait_seconds, stalled_for
from workflows.steps.describe_endpoint import describe


def request(created: datetime, poll: EndpointStatus | None = None) -> DescribeRequest:
    return DescribeRequest(
        run_id="r-1",
        spec=fast_spec("bundled", wait={"stall_threshold_min": 10, "timeout_min": 60}),
        deploy=DeployResult(
            endpoint_name="db-r-1-a1",
            endpoint_config_name="c",
            model_names=["m"],
            instance_type="ml.g5.12xlarge",
            created_at=created,
        ),
        poll=poll,
    )


def described(
    status: str, created: datetime, modified: datetime, variants: bool, reason: str | None = None
) -> dict[str, Any]:
    response: dict[str, Any] = {
        "EndpointName": "db-r-1-a1",
        "EndpointArn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint/db-r-1-a1",
        "EndpointConfigName": "c",
        "EndpointStatus": status,
        "CreationTime": created,
        "LastModifiedTime": modified,
    }
    if variants:
        response["ProductionVariants"] = [{"VariantName": "primary", "CurrentInstanceCount": 1}]
    if reason is not None:
        response["FailureReason"] = reason
    return response


def poll_once(response: dict[str, Any], req: DescribeRequest) -> EndpointStatus:
    client = boto3.client(
        "sagemaker", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with Stubber(client) as stub:
        stub.add_response("describe_endpoint", response, {"EndpointName": "db-r-1-a1"})
        return describe(req, sagemaker=client)


def test_backoff_grows_and_caps() -> None:
    waits = [next_wait_seconds(n, initial=15, maximum=120, backoff=1.5) for n in range(1, 9)]
    assert waits[0] == 15
    assert waits == sorted(waits)
    assert waits[-1] == 120


def test_creating_with_variants_keeps_polling() -> None:
    now = clock.now()
    status = poll_once(
        described("Creating", now - timedelta(minutes=20), now - timedelta(minutes=1), True), request(now)
    )
    assert status.status == "Creating"
    assert status.polls == 1
    assert status.next_wait_s == 5


def test_frozen_creating_without_variants_is_a_capacity_stall() -> None:
    # Given an endpoint Creating for 11 minutes, LastModifiedTime frozen 1 s after creation, no variants (F06)
    created = clock.now() - timedelta(minutes=11)
    response = described("Creating", created, created + timedelta(seconds=1), False)
    # When polled, Then the stall is recognised past the 10-minute threshold
    with pytest.raises(CapacityStall, match="no ProductionVariants"):
        poll_once(response, request(created))


def test_young_endpoint_without_variants_is_not_a_stall_yet() -> None:
    created = clock.now() - timedelta(minutes=3)
    status = poll_once(
        described("Creating", created, created + timedelta(seconds=1), False), request(created)
    )
    assert status.status == "Creating"
    assert not status.has_variants


def test_failed_quotes_an_empty_reason() -> None:
    now = clock.now()
    with pytest.raises(EndpointFailed, match=r"FailureReason: \(empty\)"):
        poll_once(described("Failed", now, now, False, reason=""), request(now))


def test_wait_budget_is_enforced() -> None:
    created = datetime.now(UTC) - timedelta(minutes=61)
    with pytest.raises(EndpointWaitTimeout):
        poll_once(described("Creating", created, clock.now(), True), request(created))


def pending(
    created: datetime, current: int, status: str = "Creating", since: datetime | None = None
) -> dict[str, Any]:
    """DescribeEndpoint's PendingDeploymentSummary (botocore's shape; the Stubber checks it)."""
    return {
        "EndpointConfigName": "c",
        "StartTime": created,
        "ProductionVariants": [
            {
                "VariantName": "primary",
                "InstanceType": "ml.g5.12xlarge",
                "CurrentInstanceCount": current,
                "DesiredInstanceCount": 1,
                "VariantStatus": [{"Status": status, "StartTime": since or created}],
            }
        ],
    }


@pytest.mark.parametrize(
    ("current", "status"),
    [(1, "Creating"), (0, "ActivatingTraffic"), (0, "Baking")],
    ids=["an-instance-assigned", "activating-traffic", "baking"],
)
def test_a_slow_creation_whose_pending_deployment_has_its_instance_is_not_a_stall(
    current: int, status: str
) -> None:
    # Given an endpoint Creating for 11 minutes with no ProductionVariants and a frozen LastModifiedTime
    # (the field's stall signature), but whose pending deployment shows its instance at work
    created = clock.now() - timedelta(minutes=11)
    response = described("Creating", created, created + timedelta(seconds=1), False)
    response["PendingDeploymentSummary"] = pending(created, current, status)
    # When polled past the 10-minute threshold
    polled = poll_once(response, request(created))
    # Then it keeps waiting: a healthy slow creation is not a capacity stall
    assert polled.status == "Creating"
    assert polled.instance_assigned and not polled.has_variants


def test_a_pending_deployment_with_no_instance_past_the_threshold_is_a_capacity_stall() -> None:
    # Given the same endpoint whose pending deployment still has 0 of 1 instances, status Creating
    created = clock.now() - timedelta(minutes=11)
    response = described("Creating", created, created + timedelta(seconds=1), False)
    response["PendingDeploymentSummary"] = pending(created, 0)
    # When polled, Then the stall is recognised
    with pytest.raises(
        CapacityStall, match="PendingDeploymentSummary instances 0 of 1: no instance was assigned"
    ):
        poll_once(response, request(created))


def test_the_stall_clock_starts_at_the_latest_change_of_the_pending_deployment() -> None:
    # Given no instance yet, but the variant's status entered 4 minutes ago (the deployment moved)
    created = clock.now() - timedelta(minutes=11)
    response = described("Creating", created, created + timedelta(seconds=1), False)
    response["PendingDeploymentSummary"] = pending(created, 0, since=clock.now() - timedelta(minutes=4))
    # When polled, Then it is not a stall yet (4 minutes without change, threshold 10)
    polled = poll_once(response, request(created))
    assert polled.status == "Creating" and not polled.instance_assigned


def test_stall_time_reads_the_timestamps_the_execution_state_holds() -> None:
    # Given a DescribeEndpoint answer as the diagnosis reads it back from the state (ISO text)
    created = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    answer = {
        "EndpointStatus": "Creating",
        "CreationTime": created.isoformat(),
        "LastModifiedTime": (created + timedelta(seconds=1)).isoformat(),
        "PendingDeploymentSummary": {
            "StartTime": created.isoformat(),
            "ProductionVariants": [{"CurrentInstanceCount": 0, "DesiredInstanceCount": 1}],
        },
    }
    # Then the stall is measured from the frozen LastModifiedTime, and an assigned instance ends it
    assert stalled_for(answer, created + timedelta(minutes=9)) == 9 * 60 - 1
    answer["PendingDeploymentSummary"]["ProductionVariants"][0]["CurrentInstanceCount"] = 1
    assert stalled_for(answer, created + timedelta(minutes=9)) is None
