"""``deploybench stop`` on moto: it stops an execution and waits for the record its teardown writes."""

from __future__ import annotations

import json
import time
from typing import Any

import boto3
import pytest
from typer.testing import CliRunner

from tests.support.aws import Aws
from tests.support.cli_aws import MOTO_CONFIG, PASS_DEFINITION
from workflows.cli.app import app

runner = CliRunner()
REGION = "eu-west-1"
ROLE = "arn:aws:iam::123456789012:role/deploybench-test"


@pytest.fixture
def aws_moto_config() -> dict[str, Any]:
    return MOTO_CONFIG


def machine(name: str, definition: str = PASS_DEFINITION) -> str:
    sfn = boto3.client("stepfunctions", region_name=REGION)
    return str(sfn.create_state_machine(name=name, definition=definition, roleArn=ROLE)["stateMachineArn"])


def _running_pipeline(name: str) -> str:
    waiting = json.dumps(
        {"StartAt": "Wait", "States": {"Wait": {"Type": "Wait", "Seconds": 600, "End": True}}}
    )
    sfn = boto3.client("stepfunctions", region_name=REGION)
    arn = str(
        sfn.start_execution(stateMachineArn=machine("deploybench-deploy-pipeline", waiting), name=name)[
            "executionArn"
        ]
    )
    # moto runs the execution on a thread of its own: one that starts after a stop would set it back to
    # RUNNING, so the execution is stopped only once it is in its Wait state (a deadline, never a hang).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        events = sfn.get_execution_history(executionArn=arn)["events"]
        if any(event["type"] == "WaitStateEntered" for event in events):
            return arn
        time.sleep(0.05)
    raise AssertionError(f"{arn} never entered its Wait state")


def _settled_status(arn: str) -> str:
    """The execution's status once moto has reflected the stop: AWS's StopExecution sets ABORTED at once,
    moto's execution thread sets it when its Wait state wakes (a deadline, never a hang)."""
    sfn = boto3.client("stepfunctions", region_name=REGION)
    deadline = time.monotonic() + 30
    status = sfn.describe_execution(executionArn=arn)["status"]
    while status == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.05)
        status = sfn.describe_execution(executionArn=arn)["status"]
    return str(status)


def test_stop_stops_the_execution_and_prints_what_its_teardown_removed(aws: Aws) -> None:
    from workflows.stops.teardown import StoppedTeardown, stopped_record_uri

    # Given a running execution, and the record its rule's teardown writes once it is stopped
    arn = _running_pipeline("run-stop-1")
    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket="stop-bucket", CreateBucketConfiguration={"LocationConstraint": REGION})
    record = StoppedTeardown.model_validate(
        {
            "execution_arn": arn,
            "run_id": "run-stop-1",
            "status": "ABORTED",
            "teardown": {"deleted": ["endpoint/db-run-stop-1-a1"], "kept": [], "remaining": []},
        }
    )
    key = stopped_record_uri("stop-bucket", "run-stop-1").removeprefix("s3://stop-bucket/")
    s3.put_object(Bucket="stop-bucket", Key=key, Body=record.model_dump_json().encode())
    # When `deploybench stop` runs on it (its region is read from the ARN)
    result = runner.invoke(app, ["stop", arn, "--bucket", "stop-bucket", "--json"])
    # Then the execution is stopped, and the JSON result names what the teardown removed
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["stopped"] is True and data["teardown"]["teardown"]["deleted"] == [
        "endpoint/db-run-stop-1-a1"
    ]
    assert _settled_status(arn) == "ABORTED"


def test_stop_without_a_teardown_record_in_time_exits_1_with_the_fix(aws: Aws) -> None:
    # Given a running execution whose teardown never reports
    arn = _running_pipeline("run-stop-2")
    boto3.client("s3", region_name=REGION).create_bucket(
        Bucket="stop-bucket", CreateBucketConfiguration={"LocationConstraint": REGION}
    )
    # When stop waits no time for it
    result = runner.invoke(app, ["stop", arn, "--bucket", "stop-bucket", "--timeout", "0", "--json"])
    # Then it exits 1 with a JSON error (after the progress line) naming the teardown and where to look
    assert (result.exit_code, result.stdout) == (1, "")
    error = json.loads(result.stderr.strip().splitlines()[-1])["error"]
    assert error["type"] == "TeardownIncomplete" and "TeardownStoppedExecution" in error["fix"]


def test_stop_refuses_what_is_not_an_execution_arn(aws: Aws) -> None:
    result = runner.invoke(app, ["stop", "my-run"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert "is not an execution ARN" in result.stderr
