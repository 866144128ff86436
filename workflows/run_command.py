"""``deploybench run``: the deploy pipeline on the local engine or on AWS Step Functions, followed live."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from workflows.cli_output import (
    FAILED,
    OK,
    RESULTS_DIR,
    JsonOption,
    ProfileOption,
    RegionOption,
    aws_session,
    emit,
    fail,
    guarded,
    out,
    progress,
    stack_outputs,
)
from workflows.naming import STACK_NAME
from workflows.runner import ExecutionOutcome, StateEvent

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
    elif event.kind == "caught":
        console.print(f"{lead}[yellow]↪[/] {event.state} failed after {event.seconds:.1f} s; caught")
    elif event.kind == "failed":
        error, _, cause = event.detail.partition(": ")
        console.print(f"{lead}[red]✗[/] {event.state}: {error}: {readable_cause(cause)[:600]}", markup=True)


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
    shapes = ((outcome.output or {}).get("benchmark") or {}).get("shapes") or []
    if shapes:
        table = Table(title="Benchmark (client-side latency)")
        for column in ("batch", "seq", "conc", "p50 ms", "p99 ms", "samples/s", "stable"):
            table.add_column(column, justify="right")
        for s in shapes:
            table.add_row(
                str(s["batch_size"]),
                str(s["sequence_length"]),
                str(s["concurrency"]),
                f"{s['p50_ms']:.2f}",
                f"{s['p99_ms']:.2f}",
                f"{s['samples_per_s']:.1f}",
                "yes" if s["stable"] else "no",
            )
        out.print(table)


def _aws_target(
    session: Any, stack_name: str, state_machine_arn: str | None, bucket: str | None
) -> tuple[str, str]:
    from workflows.naming import OUTPUT_BUCKET, OUTPUT_DEPLOY_PIPELINE_ARN

    if state_machine_arn and bucket:
        return state_machine_arn, bucket
    outputs = stack_outputs(session, stack_name)
    return state_machine_arn or outputs[OUTPUT_DEPLOY_PIPELINE_ARN], bucket or outputs[OUTPUT_BUCKET]


@guarded
def run(
    spec_path: Annotated[
        Path, typer.Argument(metavar="SPEC", help="YAML run spec, e.g. examples/minilm-realtime.yaml")
    ],
    local: Annotated[
        bool, typer.Option("--local", help="Run on the embedded local engine (no AWS account).")
    ] = False,
    results_dir: Annotated[
        Path, typer.Option(metavar="DIR", help="result.json and report.md go to DIR/<run id>/.")
    ] = RESULTS_DIR,
    time_scale: Annotated[
        float, typer.Option(help="Local engine only: how much faster than real time Waits pass.")
    ] = 30.0,
    fault_plan: Annotated[
        Path | None,
        typer.Option(
            metavar="PLAN",
            help="Local engine only: YAML fault plan making the local SageMaker reproduce field failures.",
        ),
    ] = None,
    stack_name: Annotated[
        str, typer.Option(metavar="STACK", help="CloudFormation stack that deployed deploybench.")
    ] = STACK_NAME,
    state_machine_arn: Annotated[
        str | None, typer.Option(metavar="ARN", help="Deploy pipeline ARN (default: the stack's output).")
    ] = None,
    bucket: Annotated[
        str | None, typer.Option(metavar="BUCKET", help="Artifact bucket (default: the stack's output).")
    ] = None,
    region: RegionOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
    skip_canary: Annotated[
        bool,
        typer.Option(
            "--skip-canary",
            help="AWS only: do not convert, pack and load the artifact locally before starting.",
        ),
    ] = False,
) -> None:
    """Run the deploy pipeline for SPEC: convert, pack, preflight, deploy, wait, warm up, benchmark, tear down."""
    from workflows.contracts import PipelineState
    from workflows.local.faults import load_fault_plan
    from workflows.naming import new_run_id
    from workflows.runner import run_aws, run_local
    from workflows.spec import load_spec
    from workflows.steps.check_spec import check_before_start

    spec = load_spec(spec_path)
    plan = load_fault_plan(fault_plan) if fault_plan else None
    if plan and not local:
        fail("--fault-plan applies to the local engine only.", fix="add --local, or drop --fault-plan")
    session = None if local else aws_session(region, profile)
    check_before_start(spec, local=local, session=session)  # the pipeline's CheckSpec, before anything starts
    state = PipelineState(run_id=new_run_id(spec.name), spec=spec)
    progress().print(f"Run [bold]{state.run_id}[/] ({'local engine' if local else 'AWS Step Functions'})")
    leaked: list[str] = []
    if local:
        outcome, leaked = run_local(
            state, results_dir=results_dir, time_scale=time_scale, fault_plan=plan, on_event=print_event
        )
    else:
        assert session is not None
        from workflows.canary_cli import canary_before_start, record_canary

        arn, bucket_name = _aws_target(session, stack_name, state_machine_arn, bucket)
        canary = canary_before_start(spec, run_id=state.run_id, skip=skip_canary, region=session.region_name)
        outcome = run_aws(
            state,
            sfn=session.client("stepfunctions"),
            s3=session.client("s3"),
            state_machine_arn=arn,
            bucket=bucket_name,
            results_dir=results_dir,
            on_event=print_event,
            on_start=lambda execution: progress().print(f"Console: {console_url(execution)}"),
        )
        record_canary(results_dir / state.run_id, canary)

    def human() -> None:
        headline(outcome)
        if leaked:
            out.print(f"[bold red]left running and now stopped by the engine:[/] {', '.join(leaked)}")

    emit(
        {
            "run_id": state.run_id,
            "engine": "local" if local else "aws",
            **outcome_json(outcome, on_aws=not local),
            "leaked": leaked,
        },
        as_json=as_json,
        human=human,
    )
    raise typer.Exit(OK if outcome.status == "SUCCEEDED" and not leaked else FAILED)
