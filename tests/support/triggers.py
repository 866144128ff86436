"""Shared by the trigger tests: moto with the region, the example trigger and a waiting machine."""

from __future__ import annotations

import json
from typing import Any

import pytest

from workflows.naming import state_machine_name
from workflows.redeploy.triggers import RedeployTrigger

BUCKET = "deploybench-artifacts-example"


REGION = "us-east-1"


TRIGGER = RedeployTrigger(
    bucket=BUCKET, key="models/minilm/deploybench.yaml", version_id="v1", etag="e", size=1, sequencer="0001"
)


@pytest.fixture
def aws_bucket() -> None:
    """The trigger tests create the stack's bucket themselves (versioned, or not at all)."""
    return None


def waiting_machine(sfn: Any, name: str = state_machine_name("redeploy_pipeline")) -> str:
    # moto does not run executions unless asked to: they stay RUNNING, like redeploys in progress.
    # Named as the stack names it: the handler's role may start only that machine.
    definition = {"StartAt": "Wait", "States": {"Wait": {"Type": "Wait", "Seconds": 3600, "End": True}}}
    return str(
        sfn.create_state_machine(
            name=name, definition=json.dumps(definition), roleArn="arn:aws:iam::123456789012:role/sfn"
        )["stateMachineArn"]
    )
