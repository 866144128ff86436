"""TeardownStoppedExecution, called as EventBridge calls it, on moto: an aborted run is torn down and recorded."""

from __future__ import annotations

import json
from typing import Any

from lambdas import deploy_endpoint, teardown_stopped_execution
from tests.support.aws import ACCOUNT, REGION, Aws
from tests.support.handlers import deployed_state, invoke
from workflows.contracts import PipelineState
from workflows.stops.teardown import DETAIL_TYPE, STOPPED_FILE

TYPES = ["ml.m5.xlarge", "ml.m5.2xlarge"]
MACHINE = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:deploybench-deploy-pipeline"


def status_change(name: str, status: str, execution_input: str) -> dict[str, Any]:
    """The event AWS sends for a status change (the fields of the service's documented example)."""
    return {
        "version": "0",
        "id": "315c1398-40ff-a850-213b-158f73e60175",
        "detail-type": DETAIL_TYPE,
        "source": "aws.states",
        "account": ACCOUNT,
        "time": "2026-12-03T08:00:00Z",
        "region": REGION,
        "resources": [f"{MACHINE.replace(':stateMachine:', ':execution:')}:{name}"],
        "detail": {
            "executionArn": f"{MACHINE.replace(':stateMachine:', ':execution:')}:{name}",
            "stateMachineArn": MACHINE,
            "name": name,
            "status": status,
            "startDate": 1796284800000,
            "stopDate": 1796284900000,
            "input": execution_input,
            "inputDetails": {"included": True},
            "output": None,
            "outputDetails": None,
        },
    }


def endpoints(aws: Aws) -> list[str]:
    return sorted(e["EndpointName"] for e in aws.sagemaker.list_endpoints()["Endpoints"])


def test_an_aborted_run_is_torn_down_and_what_was_removed_is_recorded(aws: Aws) -> None:
    # Given a deployed run that asked to keep its endpoint, beside another run's endpoint
    deployed_state(deploy_endpoint, "h-other", TYPES)
    state: PipelineState = deployed_state(deploy_endpoint, "h-aborted", TYPES, keep_endpoint=True)
    # When its execution is ABORTED and the rule delivers the status change
    result = invoke(
        teardown_stopped_execution, status_change("h-aborted", "ABORTED", state.model_dump_json())
    )
    # Then the run's resources are deleted (a stopped run keeps nothing), the other run's stay
    assert "endpoint/db-h-aborted-a1" in result["teardown"]["deleted"]
    assert result["teardown"]["remaining"] == [] and result["skipped"] is None
    assert endpoints(aws) == ["db-h-other-a1"]
    # And the record `deploybench stop` waits for is beside the run's results
    body = aws.s3.get_object(Bucket=aws.bucket, Key=f"results/h-aborted/{STOPPED_FILE}")["Body"].read()
    assert json.loads(body)["teardown"]["deleted"] == result["teardown"]["deleted"]


def test_a_stopped_sweep_or_a_finished_run_is_left_alone(aws: Aws) -> None:
    # Given a deployed run
    state = deployed_state(deploy_endpoint, "h-left", TYPES)
    # When a sweep's execution (not a run) times out, and the run's execution succeeds
    sweep = invoke(
        teardown_stopped_execution, status_change("sweep-1", "TIMED_OUT", json.dumps({"sweep": {}}))
    )
    done = invoke(teardown_stopped_execution, status_change("h-left", "SUCCEEDED", state.model_dump_json()))
    # Then nothing is torn down, and each says why
    assert "not a deploy pipeline run" in sweep["skipped"] and sweep["teardown"] is None
    assert "SUCCEEDED" in done["skipped"]
    assert endpoints(aws) == ["db-h-left-a1"]
