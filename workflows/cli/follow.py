"""``deploybench follow``: re-attach to an execution's live progress; a sweep's children, followed too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from workflows.cli.output import (
    FAILED,
    OK,
    JsonOption,
    ProfileOption,
    RegionOption,
    aws_session,
    emit,
    fail,
    guarded,
    progress,
)
from workflows.runner import Follower, StateEvent, _history, follow

_TERMINAL = {"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}


class ChildProgress:
    """Follows the child deploy pipelines of a sweep: one line per state of each, prefixed by its run.

    Children are the executions of ``child_machine_arn`` named ``<sweep id>-<index>`` (PlanSweep's
    run ids); the sweep id appears once PlanSweep has run. Finished children are read once more,
    then left alone, so a long sweep costs one history read per running child per poll.
    """

    def __init__(
        self,
        sfn: Any,
        child_machine_arn: str,
        *,
        sweep_id: Callable[[], str | None],
        on_event: Callable[[StateEvent, str], None],
    ) -> None:
        self.sfn = sfn
        self.child_machine_arn = child_machine_arn
        self.sweep_id = sweep_id
        self.on_event = on_event
        self.followers: dict[str, Follower] = {}
        self.finished: dict[str, str] = {}

    def poll(self) -> None:
        """Print the new states of every running child (and each child's end, once)."""
        identifier = self.sweep_id()
        if not identifier:
            return
        prefix = f"{identifier}-"
        for execution in _executions(self.sfn, self.child_machine_arn):
            name, arn, status = execution["name"], execution["executionArn"], execution["status"]
            if not name.startswith(prefix) or name in self.finished:
                continue
            follower = self.followers.setdefault(name, Follower())
            label = f"[magenta]run {name.removeprefix(prefix)}[/] "
            for event in follower.feed(_history(self.sfn, arn)):
                self.on_event(event, label)
            if status in _TERMINAL:
                self.finished[name] = status
                style = "green" if status == "SUCCEEDED" else "red"
                progress().print(f"{label}[bold {style}]{status}[/] {arn}")


def _executions(sfn: Any, machine_arn: str) -> list[dict[str, Any]]:
    executions: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"stateMachineArn": machine_arn, "maxResults": 100}
    while True:
        page = sfn.list_executions(**kwargs)
        executions.extend(page["executions"])
        # Newest first: a sweep's children are among the first pages.
        if not page.get("nextToken") or len(executions) >= 300:
            return executions
        kwargs["nextToken"] = page["nextToken"]


def region_of(arn: str) -> str | None:
    """``arn:aws:states:eu-west-1:...`` -> ``eu-west-1``."""
    parts = arn.split(":")
    return parts[3] if len(parts) > 3 and parts[3] else None


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
    from workflows.cli.run import console_url, headline, outcome_json, print_event

    if not execution_arn.startswith("arn:") or ":execution:" not in execution_arn:
        fail(
            f"{execution_arn!r} is not an execution ARN.",
            fix="pass arn:aws:states:REGION:ACCOUNT:execution:MACHINE:NAME (`deploybench run` prints it)",
        )
    session = aws_session(region or region_of(execution_arn), profile)
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


def sweep_children(sfn: Any, execution_arn: str) -> ChildProgress | None:
    """Child progress for a benchmark sweep's execution (None for any other machine's)."""
    from workflows.naming import state_machine_name

    machine = execution_arn.split(":")[6]
    if machine != state_machine_name("benchmark_sweep"):
        return None
    parts = execution_arn.split(":")
    child = ":".join([*parts[:5], "stateMachine", state_machine_name("deploy_pipeline")])
    return sweep_progress(sfn, execution_arn, child)


def sweep_progress(sfn: Any, execution_arn: str, child_machine_arn: str) -> ChildProgress:
    """A ``ChildProgress`` whose sweep id is read from the execution's PlanSweep once it has run."""
    from workflows.cli.operations import sweep_id_from
    from workflows.cli.run import print_event

    found: dict[str, str | None] = {}

    def identifier() -> str | None:
        if not found.get("id"):
            found["id"] = sweep_id_from(sfn, execution_arn)
        return found["id"]

    return ChildProgress(sfn, child_machine_arn, sweep_id=identifier, on_event=print_event)
