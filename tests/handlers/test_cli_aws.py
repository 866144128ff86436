"""The command line against AWS (moto): region and profile, credentials, console URLs, `follow`,
a sweep's child runs, `definition --resolve`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import boto3
import pytest
from typer.testing import CliRunner

from tests.conftest import ROOT
from tests.support.aws import Aws
from tests.support.cli_aws import MOTO_CONFIG, PASS_DEFINITION, deploy_stack
from workflows.cli.app import app

runner = CliRunner()
EXAMPLE = str(ROOT / "examples" / "minilm-realtime.yaml")
REGION = "eu-west-1"
ROLE = "arn:aws:iam::123456789012:role/deploybench-test"


@pytest.fixture
def aws_bucket() -> None:
    """The resources live in the stack's region: the default region has nothing."""
    return None


@pytest.fixture
def aws_moto_config() -> dict[str, Any]:
    return MOTO_CONFIG


def machine(name: str, definition: str = PASS_DEFINITION) -> str:
    sfn = boto3.client("stepfunctions", region_name=REGION)
    return str(sfn.create_state_machine(name=name, definition=definition, roleArn=ROLE)["stateMachineArn"])


def finished(arn: str) -> None:
    sfn = boto3.client("stepfunctions", region_name=REGION)
    for _ in range(200):
        if sfn.describe_execution(executionArn=arn)["status"] != "RUNNING":
            return
        threading.Event().wait(0.05)
    raise AssertionError(f"{arn} still running after 10 s")


# --- definition --resolve ---------------------------------------------------------------------------


def test_definition_resolve_substitutes_the_deployed_arns(aws: Aws) -> None:
    deploy_stack(boto3.client("cloudformation", region_name=REGION))
    # When the deploy pipeline's definition is resolved against the stack in eu-west-1
    result = runner.invoke(app, ["definition", "deploy_pipeline", "--resolve", "--region", REGION])
    # Then no placeholder is left and the functions are the stack's, in its region and account
    assert result.exit_code == 0, result.output
    assert "${" not in result.stdout
    assert f"arn:aws:lambda:{REGION}:123456789012:function:deploybench-convert-to-onnx" in result.stdout
    # And a deployed name resolves too: the sweep starts the deployed deploy pipeline
    sweep = runner.invoke(app, ["definition", "deploybench-benchmark-sweep", "--resolve", "--region", REGION])
    assert sweep.exit_code == 0, sweep.output
    assert f"arn:aws:states:{REGION}:123456789012:stateMachine:deploybench-deploy-pipeline" in sweep.stdout
    assert "arn:aws:states:::states:startExecution.sync:2" in json.dumps(json.loads(sweep.stdout))


def test_definition_resolve_names_a_missing_stack(aws: Aws) -> None:
    deploy_stack(boto3.client("cloudformation", region_name=REGION))
    # When the stack is looked for in the wrong region (the default, us-east-1)
    result = runner.invoke(app, ["definition", "--resolve"])
    # Then it says which stack, which region and what to do, on stderr, exit 2
    assert (result.exit_code, result.stdout) == (2, "")
    assert "StackNotFound: CloudFormation stack Deploybench does not exist in us-east-1" in result.stderr
    assert "--region" in result.stderr


# --- run on AWS -------------------------------------------------------------------------------------


def test_run_prints_the_region_correct_console_url(aws: Aws, tmp_path: Path) -> None:
    deploy_stack(boto3.client("cloudformation", region_name=REGION), machines=False)
    machine("deploybench-deploy-pipeline")
    # When a run is started with --region (the environment says us-east-1)
    result = runner.invoke(
        app, ["run", EXAMPLE, "--region", REGION, "--results-dir", str(tmp_path), "--skip-canary"]
    )
    # Then the stack's pipeline in eu-west-1 ran, and its console page is printed for eu-west-1
    assert result.exit_code == 0, result.output
    prefix = f"Console: https://{REGION}.console.aws.amazon.com/states/home?region={REGION}#/v2/executions/details/"
    assert (
        f"{prefix}arn:aws:states:{REGION}:123456789012:execution:deploybench-deploy-pipeline:"
        in result.stdout
    )
    assert "Execution SUCCEEDED" in result.stdout


def test_run_json_honours_aws_region_and_keeps_progress_off_stdout(
    aws: Aws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deploy_stack(boto3.client("cloudformation", region_name=REGION), machines=False)
    machine("deploybench-deploy-pipeline")
    monkeypatch.setenv("AWS_REGION", REGION)
    result = runner.invoke(app, ["run", EXAMPLE, "--json", "--results-dir", str(tmp_path), "--skip-canary"])
    # Then stdout is one JSON document and the live progress went to stderr
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["status"], data["engine"], data["states"]) == ("SUCCEEDED", "aws", ["Hello"])
    assert data["console_url"].startswith(f"https://{REGION}.console.aws.amazon.com/")
    assert "▶ Hello" in result.stderr


# --- follow -----------------------------------------------------------------------------------------


def test_follow_reattaches_to_an_execution_in_its_own_region(aws: Aws) -> None:
    waiting = json.dumps(
        {
            "StartAt": "Wait",
            "States": {
                "Wait": {"Type": "Wait", "Seconds": 1, "Next": "Hello"},
                "Hello": {"Type": "Pass", "End": True},
            },
        }
    )
    sfn = boto3.client("stepfunctions", region_name=REGION)
    arn = sfn.start_execution(stateMachineArn=machine("deploybench-deploy-pipeline", waiting))["executionArn"]
    # When followed while it runs (the environment's region is another one)
    result = runner.invoke(app, ["follow", arn, "--poll-s", "0.2"])
    # Then every state is printed as run prints it, then the status, and it exits 0
    assert result.exit_code == 0, result.output
    lines = result.stdout
    assert (
        lines.index("▶ Wait")
        < lines.index("✓ Wait")
        < lines.index("▶ Hello")
        < lines.index("Execution SUCCEEDED")
    )
    assert f"https://{REGION}.console.aws.amazon.com/states/home?region={REGION}" in lines


def test_follow_a_failed_execution_exits_1_with_json(aws: Aws) -> None:
    failing = json.dumps({"StartAt": "Boom", "States": {"Boom": {"Type": "Fail", "Error": "CapacityStall"}}})
    arn = boto3.client("stepfunctions", region_name=REGION).start_execution(
        stateMachineArn=machine("deploybench-deploy-pipeline", failing)
    )["executionArn"]
    finished(arn)
    result = runner.invoke(app, ["follow", arn, "--json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert (data["status"], data["error"]) == ("FAILED", "CapacityStall")


def test_follow_refuses_what_is_not_an_execution_arn(aws: Aws) -> None:
    result = runner.invoke(app, ["follow", "my-run"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert "is not an execution ARN" in result.stderr


def test_following_a_sweep_shows_its_child_runs(aws: Aws) -> None:
    # Given a sweep whose PlanSweep chose an id, and child pipelines named by it (and an unrelated run)
    sweep_id = "nightly-20261201-030000-ab12"
    plan = json.dumps(
        {
            "StartAt": "PlanSweep",
            "States": {
                "PlanSweep": {
                    "Type": "Pass",
                    "Result": {"sweep_id": sweep_id},
                    "ResultPath": "$.plan",
                    "End": True,
                }
            },
        }
    )
    child = json.dumps(
        {
            "StartAt": "ConvertToOnnx",
            "States": {
                "ConvertToOnnx": {"Type": "Pass", "Next": "DeployEndpoint"},
                "DeployEndpoint": {"Type": "Pass", "End": True},
            },
        }
    )
    sfn = boto3.client("stepfunctions", region_name=REGION)
    pipeline = machine("deploybench-deploy-pipeline", child)
    for name in (f"{sweep_id}-0", f"{sweep_id}-1", "someone-else-0"):
        finished(sfn.start_execution(stateMachineArn=pipeline, name=name)["executionArn"])
    parent = sfn.start_execution(stateMachineArn=machine("deploybench-benchmark-sweep", plan))["executionArn"]
    finished(parent)
    # When the sweep is followed
    result = runner.invoke(app, ["follow", parent, "--poll-s", "0.1"], terminal_width=200)
    # Then each run's states are printed under its index, and other runs are not
    assert result.exit_code == 0, result.output
    for index in (0, 1):
        assert f"run {index} ▶ ConvertToOnnx" in result.stdout
        assert f"run {index} SUCCEEDED" in result.stdout
    assert "someone-else" not in result.stdout


# --- credentials ------------------------------------------------------------------------------------


def _without_credentials(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
        AWS_CONFIG_FILE=str(tmp_path / "none"),
        AWS_EC2_METADATA_DISABLED="true",
        AWS_REGION=REGION,
    )
    return env


@pytest.mark.parametrize("as_json", [False, True])
def test_missing_credentials_are_one_line_with_the_fix(tmp_path: Path, as_json: bool) -> None:
    # When a command reaches AWS on a machine with no credentials at all
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "workflows.cli",
            "janitor",
            "--dry-run",
            "--bucket",
            "b",
            *(["--json"] if as_json else []),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_without_credentials(tmp_path),
        timeout=120,
    )
    # Then one line on stderr says so and how to fix it, nothing on stdout, exit 2, no traceback
    assert completed.returncode == 2, completed.stderr[-2000:]
    assert completed.stdout == "" and "Traceback" not in completed.stderr
    assert len(completed.stderr.strip().splitlines()) == 1
    if as_json:
        error = json.loads(completed.stderr)["error"]
        assert (error["type"], error["exit_code"]) == ("NoCredentials", 2)
        assert "aws configure" in error["fix"]
    else:
        assert completed.stderr.startswith(
            "NoCredentials: no usable AWS credentials were found. Fix: run `aws configure`"
        )


class _ExpiredToken(BaseHTTPRequestHandler):
    """Answers every call as AWS does once a session token has expired (query protocol)."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = (
            b"<ErrorResponse><Error><Type>Sender</Type><Code>ExpiredToken</Code>"
            b"<Message>The security token included in the request is expired</Message></Error>"
            b"<RequestId>1</RequestId></ErrorResponse>"
        )
        self.send_response(400)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return None


def test_expired_credentials_are_one_line_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    server = HTTPServer(("127.0.0.1", 0), _ExpiredToken)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL_CLOUDFORMATION", f"http://127.0.0.1:{server.server_port}")
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "ASIAEXPIRED")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
        monkeypatch.setenv("AWS_SESSION_TOKEN", "expired")
        # When run reads the stack's outputs with an expired session
        result = runner.invoke(app, ["run", EXAMPLE, "--region", REGION])
    finally:
        server.shutdown()
    # Then one line names the problem and the fix, exit 2
    assert (result.exit_code, result.stdout.count("\n")) == (2, 1)  # only the "Run ..." line
    assert result.stderr.startswith(
        "ExpiredToken: the AWS credentials have expired (ExpiredToken). Fix: refresh"
    )
    assert len(result.stderr.strip().splitlines()) == 1


# --- stop ---------------------------------------------------------------------------------------


def _running_pipeline(name: str) -> str:
    waiting = json.dumps(
        {"StartAt": "Wait", "States": {"Wait": {"Type": "Wait", "Seconds": 600, "End": True}}}
    )
    sfn = boto3.client("stepfunctions", region_name=REGION)
    return str(
        sfn.start_execution(stateMachineArn=machine("deploybench-deploy-pipeline", waiting), name=name)[
            "executionArn"
        ]
    )


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
    sfn = boto3.client("stepfunctions", region_name=REGION)
    assert sfn.describe_execution(executionArn=arn)["status"] == "ABORTED"


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
