"""``deploybench run``: the deploy pipeline on the local engine or on AWS Step Functions, followed live."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from workflows.cli.executions import console_url, headline, outcome_json, print_event
from workflows.cli.options import BucketOption, JsonOption, ProfileOption, RegionOption, StackOption
from workflows.cli.output import (
    FAILED,
    OK,
    RESULTS_DIR,
    aws_session,
    emit,
    err,
    fail,
    guarded,
    out,
    print_json,
    progress,
    stack_outputs,
)
from workflows.errors import RunInterrupted
from workflows.naming import STACK_NAME

if TYPE_CHECKING:
    from boto3.session import Session


def _aws_target(
    session: Session, stack_name: str, state_machine_arn: str | None, bucket: str | None
) -> tuple[str, str]:
    from workflows.naming import OUTPUT_BUCKET, OUTPUT_DEPLOY_PIPELINE_ARN

    if state_machine_arn and bucket:
        return state_machine_arn, bucket
    outputs = stack_outputs(session, stack_name)
    return state_machine_arn or outputs[OUTPUT_DEPLOY_PIPELINE_ARN], bucket or outputs[OUTPUT_BUCKET]


def _interrupted(stop: RunInterrupted, *, as_json: bool) -> NoReturn:
    """A local run stopped by a signal: one line (what was torn down, where the results are), 128 + signal."""
    from workflows.execution.pipeline import Interruption

    interruption = stop.interruption
    code = 128 + stop.signum
    if not isinstance(interruption, Interruption):
        raise typer.Exit(code)
    if as_json:
        print_json(
            {
                "run_id": interruption.run_id,
                "engine": "local",
                "status": "INTERRUPTED",
                "signal": interruption.signal_name,
                "state": interruption.state,
                "torn_down": interruption.torn_down,
                "results": str(interruption.results),
                "result_file": str(interruption.result_file) if interruption.result_file else None,
            }
        )
    else:
        out.print(f"[bold yellow]{interruption.line()}[/]")
    raise typer.Exit(code)


def _detached(
    stop: RunInterrupted, execution_arn: str | None, *, region: str | None, as_json: bool
) -> NoReturn:
    """Ctrl-C (or SIGTERM) while following an AWS execution: it goes on; say how to follow or stop it."""
    code = 128 + stop.signum
    if execution_arn is None:
        err.print(f"{stop.signal_name}: stopped before the execution started; nothing was created.")
        raise typer.Exit(code)
    where = f" --region {region}" if region else ""
    if as_json:
        print_json(
            {
                "status": "RUNNING",
                "execution_arn": execution_arn,
                "follow": f"deploybench follow {execution_arn}{where}",
                "stop": f"deploybench stop {execution_arn}{where}",
            }
        )
    else:
        err.print(
            f"{stop.signal_name}: stopped following; the execution goes on (and tears its endpoint down). "
            f"Follow it: deploybench follow {execution_arn}{where}   "
            f"Stop it and tear down now: deploybench stop {execution_arn}{where}"
        )
    raise typer.Exit(code)


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
    stack_name: StackOption = STACK_NAME,
    state_machine_arn: Annotated[
        str | None, typer.Option(metavar="ARN", help="Deploy pipeline ARN (default: the stack's output).")
    ] = None,
    bucket: BucketOption = None,
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
    from workflows.execution.pipeline import run_aws, run_local
    from workflows.local.faults import load_fault_plan
    from workflows.naming import new_run_id
    from workflows.spec.pipeline import load_spec
    from workflows.steps.check_spec import check_before_start, pin_source

    spec = load_spec(spec_path)
    plan = load_fault_plan(fault_plan) if fault_plan else None
    if plan and not local:
        fail("--fault-plan applies to the local engine only.", fix="add --local, or drop --fault-plan")
    session = None if local else aws_session(region, profile)
    check_before_start(spec, local=local, session=session)  # the pipeline's CheckSpec, before anything starts
    pinned = pin_source(spec, session=session)  # an hf:// branch or tag becomes the commit it names now
    if pinned.model.source != spec.model.source:
        progress().print(f"Model {spec.model.source} pinned to {pinned.model.source}")
    spec = pinned
    state = PipelineState(run_id=new_run_id(spec.name), spec=spec)
    progress().print(f"Run [bold]{state.run_id}[/] ({'local engine' if local else 'AWS Step Functions'})")
    leaked: list[str] = []
    if local:
        try:
            outcome, leaked = run_local(
                state, results_dir=results_dir, time_scale=time_scale, fault_plan=plan, on_event=print_event
            )
        except RunInterrupted as stop:
            _interrupted(stop, as_json=as_json)
    else:
        assert session is not None
        from workflows.cli.canary import canary_before_start, record_canary
        from workflows.local.interrupts import signals_raise

        arn, bucket_name = _aws_target(session, stack_name, state_machine_arn, bucket)
        canary = canary_before_start(spec, run_id=state.run_id, skip=skip_canary, region=session.region_name)
        started: list[str] = []

        def on_start(execution: str) -> None:
            started.append(execution)
            progress().print(f"Console: {console_url(execution)}")

        try:
            with signals_raise():
                outcome = run_aws(
                    state,
                    sfn=session.client("stepfunctions"),
                    s3=session.client("s3"),
                    state_machine_arn=arn,
                    bucket=bucket_name,
                    results_dir=results_dir,
                    on_event=print_event,
                    on_start=on_start,
                )
        except RunInterrupted as stop:
            _detached(stop, started[0] if started else None, region=session.region_name, as_json=as_json)
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
