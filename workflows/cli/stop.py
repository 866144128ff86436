"""``deploybench stop``: stop an execution and wait until its run is torn down.

StopExecution skips the execution's Catch branches; the stack's rule on its ABORTED status
change runs the teardown (``workflows/stops/teardown.py``), which writes what
it removed beside the run's results. ``stop`` waits for that record and prints it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

from workflows.aws.storage import get_text
from workflows.cli.executions import execution_session
from workflows.cli.options import BucketOption, JsonOption, ProfileOption, RegionOption, StackOption
from workflows.cli.output import FAILED, OK, emit, fail, guarded, out, progress, stack_outputs
from workflows.errors import DeploybenchError
from workflows.naming import OUTPUT_BUCKET, STACK_NAME
from workflows.stops.teardown import STOPPED_STATUSES, StoppedTeardown, stopped_record_uri

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client
    from types_boto3_stepfunctions import SFNClient

STOP_ERROR = "StoppedByUser"


def stop_and_wait(
    sfn: SFNClient,
    s3: S3Client,
    *,
    bucket: str,
    execution_arn: str,
    timeout_s: float,
    poll_s: float = 3.0,
) -> tuple[str, StoppedTeardown | None]:
    """Stop a running execution and wait for its teardown's record.

    Returns:
        The execution's status before the stop (RUNNING, or how it had already ended), and the
        teardown's record (None when the execution had ended otherwise: its own teardown ran).
    """
    description = sfn.describe_execution(executionArn=execution_arn)
    before = description["status"]
    if before == "RUNNING":
        sfn.stop_execution(executionArn=execution_arn, error=STOP_ERROR, cause="deploybench stop")
    elif before not in STOPPED_STATUSES:
        return before, None
    uri = stopped_record_uri(bucket, description["name"])
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return before, StoppedTeardown.model_validate_json(get_text(s3, uri))
        except DeploybenchError:
            if time.monotonic() > deadline:
                raise
        time.sleep(poll_s)


@guarded
def stop(
    execution_arn: Annotated[
        str,
        typer.Argument(
            metavar="EXECUTION_ARN", help="A running deploy pipeline execution (`run` prints it)."
        ),
    ],
    timeout_s: Annotated[
        float,
        typer.Option("--timeout", metavar="SECONDS", help="How long to wait for the teardown to finish."),
    ] = 900.0,
    stack_name: StackOption = STACK_NAME,
    bucket: BucketOption = None,
    region: RegionOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Stop EXECUTION_ARN and wait until its run is torn down; print what was removed."""
    session = execution_session(execution_arn, region, profile)
    bucket_name = bucket or stack_outputs(session, stack_name)[OUTPUT_BUCKET]
    progress().print(f"Stopping {execution_arn}; waiting for its teardown (up to {timeout_s:.0f} s)")
    try:
        before, record = stop_and_wait(
            session.client("stepfunctions"),
            session.client("s3"),
            bucket=bucket_name,
            execution_arn=execution_arn,
            timeout_s=timeout_s,
        )
    except DeploybenchError as error:
        fail(
            f"the execution is stopped, but no teardown record appeared within {timeout_s:.0f} s ({error.message})",
            code=FAILED,
            kind="TeardownIncomplete",
            fix="check the TeardownStoppedExecution function's log and the dead-letter queue; "
            "`deploybench janitor --dry-run` lists what is left",
        )
    teardown = record.teardown if record else None
    result: dict[str, Any] = {
        "execution_arn": execution_arn,
        "status_before": before,
        "stopped": before == "RUNNING",
        "teardown": record.model_dump(mode="json") if record else None,
    }

    def human() -> None:
        if record is None:
            out.print(f"The execution had already ended {before}: its own teardown ran; nothing to stop.")
            return
        if record.skipped:
            out.print(f"Stopped; nothing torn down: {record.skipped}")
            return
        assert teardown is not None
        out.print(f"Stopped run {record.run_id}; removed {len(teardown.deleted)}:")
        for name in teardown.deleted:
            out.print(f"  {name}")
        if teardown.remaining:
            out.print(f"[bold red]still there:[/] {', '.join(teardown.remaining)}")

    emit(result, as_json=as_json, human=human)
    raise typer.Exit(FAILED if teardown and teardown.remaining else OK)
