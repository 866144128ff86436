"""The local engine's stand-in for ``arn:aws:states:::states:startExecution.sync:2``.

moto's interpreter cannot run a ``.sync`` integration ("Unsupported sync callback procedure"),
so the definitions name that Task's resource ``${StartExecutionSyncResource}``: CDK substitutes
the real integration, and the local engine substitutes this function. It receives the Task's
``Parameters`` unchanged (``StateMachineArn``, ``Name``, ``Input``), starts the child on moto,
follows it to the end and returns what ``.sync:2`` returns (the DescribeExecution fields, with
``Input`` and ``Output`` as JSON). A child that does not succeed fails the Task, as on AWS.

Children run one at a time: every handler runs in this one process, and two model exports at
once would compete for its cores and its PyTorch state. On AWS the Map's MaxConcurrency holds.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import TYPE_CHECKING, Any

import boto3
from pydantic import BaseModel, ConfigDict, Field

from workflows.errors import ChildExecutionFailed
from workflows.local.lambda_seam import RegisteredFunction

if TYPE_CHECKING:
    from types_boto3_stepfunctions import SFNClient

FUNCTION_NAME = "deploybench-local-start-execution-sync"
# Long enough for a real model's whole pipeline on this machine; the poll gives up after it.
TIMEOUT_S = 4 * 3600
POLL_S = 0.2
REGISTERED = RegisteredFunction(f"{__name__}.handler", memory_mb=128, timeout_s=TIMEOUT_S)

_one_child_at_a_time = threading.Lock()


class StartExecutionSync(BaseModel):
    """The Task's Parameters, as Step Functions passes them to the integration."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    state_machine_arn: str = Field(alias="StateMachineArn")
    name: str = Field(alias="Name")
    input: Any = Field(alias="Input")


def _client() -> Any:
    return boto3.client("stepfunctions", region_name=os.environ.get("AWS_REGION", "us-east-1"))


def _start(sfn: SFNClient, request: StartExecutionSync) -> str:
    payload = request.input if isinstance(request.input, str) else json.dumps(request.input)
    try:
        return str(
            sfn.start_execution(stateMachineArn=request.state_machine_arn, name=request.name, input=payload)[
                "executionArn"
            ]
        )
    except sfn.exceptions.ExecutionAlreadyExists:
        # AWS returns the running execution for the same name and input: follow that one.
        return request.state_machine_arn.replace(":stateMachine:", ":execution:") + f":{request.name}"


def _follow(sfn: SFNClient, arn: str, deadline_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + deadline_s
    while True:
        description: dict[str, Any] = dict(sfn.describe_execution(executionArn=arn))
        if description["status"] != "RUNNING":
            return description
        if time.monotonic() > deadline:
            sfn.stop_execution(executionArn=arn, error="States.Timeout", cause="the parent task timed out")
            raise ChildExecutionFailed(
                f"child execution {arn} did not finish within {deadline_s:.0f} s; stopped it."
            )
        time.sleep(POLL_S)


def _as_json(text: str | None) -> Any:
    return json.loads(text) if text else None


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Start the child, wait for it, return the ``.sync:2`` result; raise when it did not succeed."""
    request = StartExecutionSync.model_validate(event)
    sfn = _client()
    with _one_child_at_a_time:
        arn = _start(sfn, request)
        description = _follow(sfn, arn, context.get_remaining_time_in_millis() / 1000)
    status = description["status"]
    if status != "SUCCEEDED":
        raise ChildExecutionFailed(
            f"child execution {request.name} ended {status}: {description.get('error')}: "
            f"{(description.get('cause') or '')[:2000]}"
        )
    return {
        "ExecutionArn": arn,
        "StateMachineArn": request.state_machine_arn,
        "Name": request.name,
        "Status": status,
        "StartDate": description["startDate"].isoformat(),
        "StopDate": description["stopDate"].isoformat(),
        "Input": _as_json(description.get("input")),
        "Output": _as_json(description.get("output")),
    }
