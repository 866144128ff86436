"""The ``deploybench`` command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from workflows import (
    bench_command,
    cli_checks,
    convert_command,
    doctor_aws,
    images_command,
    operations_cli,
    scale_timing_command,
)
from workflows.errors import DeploybenchError
from workflows.reports import command as report_command
from workflows.runner import ExecutionOutcome, StateEvent

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Convert, deploy, benchmark and tear down encoders on SageMaker.",
)
console = Console(highlight=False, soft_wrap=True)


def readable_cause(cause: str) -> str:
    """A Lambda error's Cause is its JSON payload; show the message."""
    import json

    try:
        payload = json.loads(cause)
    except (TypeError, ValueError):
        return cause
    return str(payload.get("errorMessage", cause)) if isinstance(payload, dict) else cause


def fail(error: DeploybenchError, code: int = 2) -> None:
    console.print(f"[bold red]{type(error).__name__}[/]: {error}")
    raise typer.Exit(code)


def print_event(event: StateEvent) -> None:
    stamp = event.at.strftime("%H:%M:%S")
    if event.kind == "entered":
        console.print(f"{stamp}  [cyan]▶[/] {event.state}")
    elif event.kind == "exited":
        console.print(f"{stamp}  [green]✓[/] {event.state} [dim]{event.seconds:.1f} s[/]")
    elif event.kind == "caught":
        console.print(f"{stamp}  [yellow]↪[/] {event.state} failed after {event.seconds:.1f} s; caught")
    elif event.kind == "failed":
        error, _, cause = event.detail.partition(": ")
        console.print(f"{stamp}  [red]✗[/] {event.state}: {error}: {readable_cause(cause)[:600]}")


def headline(outcome: ExecutionOutcome) -> None:
    status_style = "green" if outcome.status == "SUCCEEDED" else "red"
    console.print(
        f"\nExecution [bold {status_style}]{outcome.status}[/] in {outcome.wall_s:.1f} s: {outcome.execution_arn}"
    )
    if outcome.error:
        console.print(f"[red]{outcome.error}[/]: {readable_cause(outcome.cause or '')[:1200]}")
    for path in outcome.results:
        console.print(f"  wrote {path}")
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
        console.print(table)


def _aws_target(stack_name: str, state_machine_arn: str | None, bucket: str | None) -> tuple[str, str]:
    import boto3

    from workflows.naming import OUTPUT_BUCKET, OUTPUT_DEPLOY_PIPELINE_ARN

    if state_machine_arn and bucket:
        return state_machine_arn, bucket
    stacks = boto3.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])}
    return state_machine_arn or outputs[OUTPUT_DEPLOY_PIPELINE_ARN], bucket or outputs[OUTPUT_BUCKET]


@app.command()
def run(
    spec_path: Annotated[Path, typer.Argument(help="YAML run spec, e.g. examples/minilm-realtime.yaml")],
    local: Annotated[
        bool, typer.Option("--local", help="Run on the embedded local engine (no AWS account).")
    ] = False,
    results_dir: Annotated[Path, typer.Option(help="Where result.json and report.md are written.")] = Path(
        "deploybench-results"
    ),
    time_scale: Annotated[
        float, typer.Option(help="Local engine only: how much faster than real time Waits pass.")
    ] = 30.0,
    fault_plan: Annotated[
        Path | None,
        typer.Option(
            help="Local engine only: YAML fault plan making the local SageMaker reproduce field failures."
        ),
    ] = None,
    stack_name: Annotated[
        str, typer.Option(help="CloudFormation stack that deployed deploybench.")
    ] = "Deploybench",
    state_machine_arn: Annotated[
        str | None, typer.Option(help="Deploy pipeline ARN (default: the stack's output).")
    ] = None,
    bucket: Annotated[str | None, typer.Option(help="Artifact bucket (default: the stack's output).")] = None,
) -> None:
    """Run the deploy pipeline for SPEC: convert, pack, preflight, deploy, wait, warm up, benchmark, tear down."""
    import boto3

    from workflows.contracts import PipelineState
    from workflows.local.faults import load_fault_plan
    from workflows.naming import new_run_id
    from workflows.runner import run_aws, run_local
    from workflows.spec import load_spec

    try:
        spec = load_spec(spec_path)
        plan = load_fault_plan(fault_plan) if fault_plan else None
    except DeploybenchError as error:
        fail(error)
    if plan and not local:
        console.print("[red]--fault-plan applies to the local engine only; add --local[/]")
        raise typer.Exit(2)
    state = PipelineState(run_id=new_run_id(spec.name), spec=spec)
    console.print(f"Run [bold]{state.run_id}[/] ({'local engine' if local else 'AWS Step Functions'})")
    leaked: list[str] = []
    try:
        if local:
            outcome, leaked = run_local(
                state, results_dir=results_dir, time_scale=time_scale, fault_plan=plan, on_event=print_event
            )
        else:
            arn, bucket_name = _aws_target(stack_name, state_machine_arn, bucket)
            outcome = run_aws(
                state,
                sfn=boto3.client("stepfunctions"),
                s3=boto3.client("s3"),
                state_machine_arn=arn,
                bucket=bucket_name,
                results_dir=results_dir,
                on_event=print_event,
            )
    except DeploybenchError as error:
        fail(error)
    headline(outcome)
    if leaked:
        console.print(f"[bold red]left running and now stopped by the engine:[/] {', '.join(leaked)}")
    raise typer.Exit(0 if outcome.status == "SUCCEEDED" and not leaked else 1)


@app.command()
def schema() -> None:
    """Print the run spec's JSON Schema."""
    from workflows.spec import json_schema

    sys.stdout.write(json_schema() + "\n")


@app.command()
def definition(name: Annotated[str, typer.Argument(help="State machine name")] = "deploy_pipeline") -> None:
    """Print a state machine's ASL definition (with ${...FunctionArn} placeholders)."""
    import state_machines

    if name not in state_machines.names():
        console.print(
            f"[red]unknown state machine {name!r}[/]; choose one of {', '.join(state_machines.names())}"
        )
        raise typer.Exit(2)
    sys.stdout.write(state_machines.definition_json(name) + "\n")


app.command()(cli_checks.preflight)
app.command()(cli_checks.diagnose)
app.command(name="bench")(bench_command.bench)
app.command(name="report")(report_command.report)
app.command()(operations_cli.sweep)
app.command()(operations_cli.janitor)
app.command(name="input")(operations_cli.pipeline_input)
app.command()(convert_command.convert)
app.command(name="scale-timing")(scale_timing_command.scale_timing)
app.command()(images_command.images)
app.command(name="doctor")(doctor_aws.doctor_command)


def main(argv: list[str] | None = None) -> Any:
    return app(argv)


if __name__ == "__main__":
    main()
