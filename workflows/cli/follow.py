"""``deploybench follow``: re-attach to an execution's live progress; a sweep's children, followed too."""

from __future__ import annotations

from typing import Annotated

import typer

from workflows.cli.executions import (
    console_url,
    execution_session,
    headline,
    outcome_json,
    print_event,
    sweep_children,
)
from workflows.cli.options import JsonOption, ProfileOption, RegionOption
from workflows.cli.output import FAILED, OK, emit, guarded, progress
from workflows.execution.pipeline import follow


@guarded
def follow_execution(
    execution_arn: Annotated[
        str, typer.Argument(metavar="EXECUTION_ARN", help="A Step Functions execution, running or finished.")
    ],
    poll_s: Annotated[float, typer.Option(metavar="SECONDS", help="Seconds between history reads.")] = 5.0,
    region: RegionOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print EXECUTION_ARN's states from its start, then live until it ends (a sweep: its runs' states too)."""
    session = execution_session(execution_arn, region, profile)
    sfn = session.client("stepfunctions")
    progress().print(f"Console: {console_url(execution_arn)}")
    children = sweep_children(sfn, execution_arn)
    outcome = follow(
        sfn,
        execution_arn,
        on_event=print_event,
        poll_s=poll_s,
        on_poll=children.poll if children else _nothing,
    )
    emit(outcome_json(outcome), as_json=as_json, human=lambda: headline(outcome))
    raise typer.Exit(OK if outcome.status == "SUCCEEDED" else FAILED)


def _nothing() -> None:
    return None
