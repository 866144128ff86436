"""TeardownStoppedExecution: an aborted or timed-out execution's run is torn down at once.

StopExecution (the console's Stop, ``aws stepfunctions stop-execution``, ``deploybench stop``) and
a state machine's own timeout end an execution without running its Catch branches, so the
pipeline's teardown never runs. An EventBridge rule on the state machines' "Step Functions
Execution Status Change" events (ABORTED, TIMED_OUT; ``STOPPED_EVENT_PATTERN``) invokes this step
with the event; it runs the pipeline's own teardown on the run state the execution was started
with (the event's ``detail.input``), and writes what it removed beside the run's results
(``STOPPED_FILE``), where ``deploybench stop`` waits for it. On the local engine, the engine's
event router (``workflows/local/events.py``) delivers the same events to the same function.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field, ValidationError

from workflows.aws.storage import put_text
from workflows.contracts import Contract, ErrorInfo, PipelineState, TeardownResult
from workflows.errors import ResourceBusy
from workflows.hosting.routed import Regional
from workflows.naming import results_prefix
from workflows.settings import Settings
from workflows.steps.teardown_endpoint import teardown

if TYPE_CHECKING:
    from types_boto3_application_autoscaling import ApplicationAutoScalingClient
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_resourcegroupstaggingapi import ResourceGroupsTaggingAPIClient
    from types_boto3_s3 import S3Client
    from types_boto3_sagemaker import SageMakerClient

DETAIL_TYPE = "Step Functions Execution Status Change"
STOPPED_STATUSES = ("ABORTED", "TIMED_OUT")
STOPPED_FILE = "stopped-teardown.json"
# A deleting or still-creating endpoint refuses deletion (ResourceBusy); the pipeline's Retry waits
# it out, here a loop does, within the function's 900 s.
BUSY_DEADLINE_S = 780.0
BUSY_PAUSE_S = 15.0


def stopped_event_pattern(state_machine_arns: list[str]) -> dict[str, Any]:
    """The rule's pattern (CDK's and the local engine's router's): these machines' stopped executions."""
    return {
        "source": ["aws.states"],
        "detail-type": [DETAIL_TYPE],
        "detail": {"status": list(STOPPED_STATUSES), "stateMachineArn": list(state_machine_arns)},
    }


class ExecutionDetail(Contract):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    execution_arn: str = Field(alias="executionArn")
    state_machine_arn: str = Field(alias="stateMachineArn")
    name: str
    status: str
    input: str | None = Field(None, description="The execution's input, as JSON text.")


class ExecutionStatusChange(Contract):
    """The EventBridge event, as the rule delivers it (only the fields the teardown reads)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    detail_type: str = Field(alias="detail-type")
    source: str
    detail: ExecutionDetail


class StoppedTeardown(Contract):
    execution_arn: str
    run_id: str
    status: str
    skipped: str | None = Field(None, description="Why nothing was torn down (not a stopped pipeline run).")
    teardown: TeardownResult | None = None
    record_uri: str | None = None


def stopped_record_uri(bucket: str, run_id: str) -> str:
    """Where the teardown of a stopped run writes what it removed."""
    return f"s3://{bucket}/{results_prefix(run_id)}{STOPPED_FILE}"


def _run_state(detail: ExecutionDetail) -> PipelineState | None:
    try:
        payload = json.loads(detail.input or "")
        return PipelineState.model_validate(payload)
    except (ValueError, ValidationError):
        return None


def teardown_stopped(
    event: ExecutionStatusChange,
    *,
    sagemaker: SageMakerClient,
    s3: S3Client,
    settings: Settings,
    autoscaling: ApplicationAutoScalingClient | None = None,
    cloudwatch: CloudWatchClient | None = None,
    tagging: ResourceGroupsTaggingAPIClient | None = None,
    regional: Regional | None = None,
    busy_deadline_s: float = BUSY_DEADLINE_S,
    busy_pause_s: float = BUSY_PAUSE_S,
) -> StoppedTeardown:
    """Tear down the run of a stopped execution with the pipeline's teardown; record what it removed.

    Raises:
        ResourceBusy: a resource still refused deletion after ``busy_deadline_s`` (the invocation
            fails, and Lambda retries the event).
    """
    detail = event.detail
    outcome = StoppedTeardown(execution_arn=detail.execution_arn, run_id=detail.name, status=detail.status)
    if detail.status not in STOPPED_STATUSES:
        return outcome.model_copy(update={"skipped": f"the execution is {detail.status}, not stopped"})
    state = _run_state(detail)
    if state is None:
        # A sweep's or a redeploy's execution: each run it started is a deploy pipeline execution,
        # stopped with it, and torn down on its own event.
        return outcome.model_copy(update={"skipped": "the execution's input is not a deploy pipeline run"})
    # Stopped is not a success: keep_endpoint keeps only a successful run's endpoint.
    state = state.model_copy(
        update={
            "error": ErrorInfo(Error=f"States.{detail.status.title().replace('_', '')}", Cause=detail.status)
        }
    )
    deadline = time.monotonic() + busy_deadline_s
    while True:
        try:
            result = teardown(
                state,
                sagemaker=sagemaker,
                s3=s3,
                settings=settings,
                autoscaling=autoscaling,
                cloudwatch=cloudwatch,
                tagging=tagging,
                regional=regional,
            )
            break
        except ResourceBusy:
            if time.monotonic() + busy_pause_s > deadline:
                raise
            time.sleep(busy_pause_s)
    uri = stopped_record_uri(settings.bucket, state.run_id)
    outcome = outcome.model_copy(update={"run_id": state.run_id, "teardown": result, "record_uri": uri})
    put_text(s3, uri, outcome.model_dump_json(indent=2), "application/json")
    return outcome
