"""How the commands that follow an execution show it: its states, its outcome, a sweep's children.

Shared by ``deploybench run``, ``follow``, ``stop`` and ``sweep``; no command module imports another.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from workflows.cli.output import aws_session, err, fail, out, print_table, progress
from workflows.execution.pipeline import ExecutionOutcome, Follower, StateEvent, _history
from workflows.naming import state_machine_name
from workflows.reports.tables import fmt, percentile_cell, samples_of

if TYPE_CHECKING:
    from boto3.session import Session
    from types_boto3_stepfunctions import SFNClient

_CONSOLES = {
    "aws": "console.aws.amazon.com",
    "aws-cn": "console.amazonaws.cn",
    "aws-us-gov": "console.amazonaws-us-gov.com",
}


def console_url(execution_arn: str) -> str:
    """The Step Functions console page of an execution, in the execution's own region and partition."""
    parts = execution_arn.split(":")
    partition, region = parts[1], parts[3]
    host = _CONSOLES.get(partition, _CONSOLES["aws"])
    return f"https://{region}.{host}/states/home?region={region}#/v2/executions/details/{execution_arn}"


def region_of(arn: str) -> str | None:
    """``arn:aws:states:eu-west-1:...`` -> ``eu-west-1``."""
    parts = arn.split(":")
    return parts[3] if len(parts) > 3 and parts[3] else None


def execution_session(execution_arn: str, region: str | None, profile: str | None) -> Session:
    """The session of a command on one execution: in the execution's own region unless --region says
    otherwise; exit 2 when the argument is not an execution ARN."""
    if not execution_arn.startswith("arn:") or ":execution:" not in execution_arn:
        fail(
            f"{execution_arn!r} is not an execution ARN.",
            fix="pass arn:aws:states:REGION:ACCOUNT:execution:MACHINE:NAME (`deploybench run` prints it)",
        )
    return aws_session(region or region_of(execution_arn), profile)


def readable_cause(cause: str) -> str:
    """A Lambda error's Cause is its JSON payload; show the message."""
    try:
        payload = json.loads(cause)
    except (TypeError, ValueError):
        return cause
    return str(payload.get("errorMessage", cause)) if isinstance(payload, dict) else cause


def print_event(event: StateEvent, prefix: str = "") -> None:
    """One line per state entered, left, caught or failed (stdout; stderr under ``--json``)."""
    stamp = event.at.strftime("%H:%M:%S")
    lead = f"{stamp}  {prefix}"
    console = progress()
    if event.kind == "entered":
        console.print(f"{lead}[cyan]▶[/] {event.state}")
    elif event.kind == "exited":
        console.print(f"{lead}[green]✓[/] {event.state} [dim]{event.seconds:.1f} s[/]")
        for line in event.detail.splitlines():
            console.print(f"{lead}  {line}", markup=False)
    elif event.kind == "retry":
        error, _, cause = event.detail.partition(": ")
        console.print(
            f"{lead}[yellow]↻[/] {event.state}: retry {event.attempt} after {escape(error)} "
            f"[dim]{escape(readable_cause(cause)[:200])}[/]"
        )
    elif event.kind == "caught":
        error = event.detail.partition(": ")[0] or "an error"
        console.print(
            f"{lead}[yellow]↪[/] {event.state}: {escape(error)} after {event.seconds:.1f} s, caught; "
            "the catch path runs next (remediation, or teardown)"
        )
    elif event.kind == "failed":
        error, _, cause = event.detail.partition(": ")
        console.print(
            f"{lead}[red]✗[/] {event.state}: {escape(error)}: {escape(readable_cause(cause)[:600])}"
        )


def outcome_json(outcome: ExecutionOutcome, *, on_aws: bool = True) -> dict[str, Any]:
    """What ``--json`` prints for a followed execution (a local one has no console page)."""
    return {
        "status": outcome.status,
        "execution_arn": outcome.execution_arn,
        "console_url": console_url(outcome.execution_arn) if on_aws else None,
        "wall_s": outcome.wall_s,
        "error": outcome.error,
        "cause": readable_cause(outcome.cause) if outcome.cause else None,
        "states": outcome.states,
        "results": [str(path) for path in outcome.results],
        "output": outcome.output,
    }


def cache_line(convert: dict[str, Any] | None) -> str | None:
    """What the conversion cache did for ConvertToOnnx, for the run's summary (None: it was off)."""
    cache = (convert or {}).get("cache") or {}
    if not convert or cache.get("status") not in ("hit", "miss"):
        return None
    verb = "hit, artifact reused" if cache["status"] == "hit" else "miss, converted and stored"
    line = f"conversion cache {verb} in {convert['seconds']:.1f} s (key {cache['key'][:12]}, {cache['location']})"
    # Pools across devices: each further device's artifact has its own entry.
    for device in convert.get("device_artifacts") or []:
        own = device.get("cache") or {}
        if own.get("status") in ("hit", "miss"):
            line += f"; {device['device']} artifact: {own['status']} (key {own['key'][:12]})"
    return line


def headline(outcome: ExecutionOutcome) -> None:
    """The execution's status, its error, the files written and the benchmark table (stdout)."""
    status_style = "green" if outcome.status == "SUCCEEDED" else "red"
    out.print(
        f"\nExecution [bold {status_style}]{outcome.status}[/] in {outcome.wall_s:.1f} s: {outcome.execution_arn}"
    )
    if outcome.error:
        out.print(f"[red]{outcome.error}[/]: {readable_cause(outcome.cause or '')[:1200]}")
    for path in outcome.results:
        out.print(f"  wrote {path}")
    line = cache_line((outcome.output or {}).get("convert"))
    if line:
        out.print(f"  {line}")
    shapes = ((outcome.output or {}).get("benchmark") or {}).get("shapes") or []
    if shapes:
        table = Table(title="Benchmark (client-side latency)")
        for column in ("batch", "seq", "conc", "n", "p50 ms", "p99 ms (95% CI)", "samples/s", "stable"):
            table.add_column(column, justify="right")
        for s in shapes:
            table.add_row(
                str(s["batch_size"]),
                str(s["sequence_length"]),
                str(s["concurrency"]),
                str(samples_of(s)),
                fmt(s["p50_ms"]),
                percentile_cell(s, "p99", compact=True),
                f"{s['samples_per_s']:.1f}",
                "yes" if s["stable"] else "no",
            )
        print_table(table)
        for s in shapes:
            if not s["stable"]:
                out.print(
                    f"  b{s['batch_size']}/{s['sequence_length']} c{s['concurrency']} not stable: "
                    f"{s.get('unstable_reason') or s.get('stop_reason') or 'stopping rule not met'}"
                )
    plan = (outcome.output or {}).get("benchmark_plan") or {}
    for finding in plan.get("findings") or []:
        err.print(
            f"[yellow]warning[/] {finding['id']}: {escape(finding['message'])} Fix: {escape(finding['fix'])}."
        )


_TERMINAL = {"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}


class ChildProgress:
    """Follows the child deploy pipelines of a sweep: one line per state of each, prefixed by its run.

    Children are the executions of ``child_machine_arn`` named ``<sweep id>-<index>`` (PlanSweep's
    run ids); the sweep id appears once PlanSweep has run. Finished children are read once more,
    then left alone, so a long sweep costs one history read per running child per poll.
    """

    def __init__(
        self,
        sfn: SFNClient,
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


def _executions(sfn: SFNClient, machine_arn: str) -> list[dict[str, Any]]:
    executions: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"stateMachineArn": machine_arn, "maxResults": 100}
    while True:
        page = sfn.list_executions(**kwargs)
        executions.extend(dict(execution) for execution in page["executions"])
        # Newest first: a sweep's children are among the first pages.
        if not page.get("nextToken") or len(executions) >= 300:
            return executions
        kwargs["nextToken"] = page["nextToken"]


def sweep_id_from(sfn: SFNClient, execution_arn: str) -> str | None:
    """The sweep id PlanSweep chose (from the execution's history; the output is empty when it failed)."""
    for event in _history(sfn, execution_arn):
        details = event.get("stateExitedEventDetails") or {}
        if details.get("name") == "PlanSweep":
            return str(json.loads(details["output"])["plan"]["sweep_id"])
    return None


def sweep_children(sfn: SFNClient, execution_arn: str) -> ChildProgress | None:
    """Child progress for a benchmark sweep's execution (None for any other machine's)."""
    machine = execution_arn.split(":")[6]
    if machine != state_machine_name("benchmark_sweep"):
        return None
    parts = execution_arn.split(":")
    child = ":".join([*parts[:5], "stateMachine", state_machine_name("deploy_pipeline")])
    return sweep_progress(sfn, execution_arn, child)


def sweep_progress(sfn: SFNClient, execution_arn: str, child_machine_arn: str) -> ChildProgress:
    """A ``ChildProgress`` whose sweep id is read from the execution's PlanSweep once it has run."""
    found: dict[str, str | None] = {}

    def identifier() -> str | None:
        if not found.get("id"):
            found["id"] = sweep_id_from(sfn, execution_arn)
        return found["id"]

    return ChildProgress(sfn, child_machine_arn, sweep_id=identifier, on_event=print_event)
