"""``deploybench sweep`` and ``deploybench janitor``: the deployed stack's scheduled jobs, run by hand."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from workflows.errors import DeploybenchError

STACK = "Deploybench"


def _outputs(stack_name: str) -> dict[str, str]:
    import boto3

    stacks = boto3.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"]
    return {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])}


def sweep_id_from(sfn: Any, execution_arn: str) -> str | None:
    """The sweep id PlanSweep chose (from the execution's history; the output is empty when it failed)."""
    from workflows.runner import _history

    for event in _history(sfn, execution_arn):
        details = event.get("stateExitedEventDetails") or {}
        if details.get("name") == "PlanSweep":
            return str(json.loads(details["output"])["plan"]["sweep_id"])
    return None


def _download(s3: Any, bucket: str, name: str, sweep_id: str, target: Path) -> list[Path]:
    from workflows.naming import SWEEPS_PREFIX
    from workflows.storage import download_folder

    return download_folder(s3, f"s3://{bucket}/{SWEEPS_PREFIX}{name}/{sweep_id}/", target / sweep_id)


def _local_baseline(s3: Any, bucket: str, name: str, folder: Path, *, restore: bool) -> None:
    """The local engine's S3 lives as long as one run: keep a sweep's baseline in the results folder."""
    from workflows.naming import SWEEPS_PREFIX

    key, path = f"{SWEEPS_PREFIX}{name}/baseline.json", folder / "baseline.json"
    if restore and path.exists():
        s3.upload_file(str(path), bucket, key)
    elif not restore and "Contents" in s3.list_objects_v2(Bucket=bucket, Prefix=key):
        folder.mkdir(parents=True, exist_ok=True)
        s3.download_file(bucket, key, str(path))


def sweep(
    sweep_path: Annotated[Path, typer.Argument(help="YAML sweep, e.g. examples/sweep-nightly.yaml")],
    local: Annotated[bool, typer.Option("--local", help="Run on the embedded local engine.")] = False,
    results_dir: Annotated[Path, typer.Option(help="Where summary.json and report.md are written.")] = Path(
        "deploybench-results"
    ),
    time_scale: Annotated[float, typer.Option(help="Local engine only: how much faster Waits pass.")] = 30.0,
    stack_name: Annotated[str, typer.Option(help="CloudFormation stack that deployed deploybench.")] = STACK,
) -> None:
    """Run a benchmark sweep: every matrix combination as a deploy pipeline, then one comparison report."""
    import boto3

    from workflows.cli import console, fail, print_event, readable_cause
    from workflows.runner import follow
    from workflows.sweeps.spec import load_sweep

    try:
        spec = load_sweep(sweep_path)
    except DeploybenchError as error:
        fail(error)
    payload = {"sweep": spec.model_dump(mode="json")}
    name = f"{spec.name}-{datetime.now(UTC):%Y%m%d-%H%M%S}"
    folder = results_dir / "sweeps" / spec.name
    if local:
        from workflows.hosting.modes import refuse_unservable_locally
        from workflows.local.engine import BUCKET, LocalEngine
        from workflows.sweeps.spec import expand

        try:
            for item in expand(spec):
                refuse_unservable_locally(item.spec.hosting.mode)
        except DeploybenchError as error:
            fail(error)
        with LocalEngine(workdir=folder / name / "engine", time_scale=time_scale) as engine:
            sfn, s3 = engine.client("stepfunctions"), engine.client("s3")
            _local_baseline(s3, BUCKET, spec.name, folder, restore=True)
            arn = engine.start_execution("benchmark_sweep", payload, name=name)
            outcome = follow(sfn, arn, on_event=print_event)
            sweep_id = sweep_id_from(sfn, arn)
            files = _download(s3, BUCKET, spec.name, sweep_id, folder) if sweep_id else []
            _local_baseline(s3, BUCKET, spec.name, folder, restore=False)
    else:
        outputs = _outputs(stack_name)
        sfn, s3 = boto3.client("stepfunctions"), boto3.client("s3")
        arn = sfn.start_execution(
            stateMachineArn=outputs["BenchmarkSweepArn"], name=name, input=json.dumps(payload)
        )["executionArn"]
        console.print(f"Sweep execution {arn}")
        outcome = follow(sfn, arn, on_event=print_event, poll_s=5.0)
        sweep_id = sweep_id_from(sfn, arn)
        files = (
            _download(s3, outputs["ArtifactBucketName"], spec.name, sweep_id, results_dir) if sweep_id else []
        )
    console.print(f"\nSweep [bold]{outcome.status}[/] in {outcome.wall_s:.0f} s")
    if outcome.error:
        console.print(f"[red]{outcome.error}[/]: {readable_cause(outcome.cause or '')[:1500]}")
    for path in files:
        console.print(f"  wrote {path}")
    raise typer.Exit(0 if outcome.status == "SUCCEEDED" else 1)


def janitor(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be removed; remove nothing.")
    ] = False,
    stack_name: Annotated[str, typer.Option(help="CloudFormation stack that deployed deploybench.")] = STACK,
    bucket: Annotated[str | None, typer.Option(help="Artifact bucket (default: the stack's output).")] = None,
) -> None:
    """Delete SageMaker resources and staging folders of deploybench runs past their TTL (what the hourly schedule does)."""
    import boto3

    from workflows.cli import console
    from workflows.janitor import run_janitor

    outputs = _outputs(stack_name) if not bucket else {}
    report = run_janitor(
        sagemaker=boto3.client("sagemaker"),
        s3=boto3.client("s3"),
        sns=boto3.client("sns"),
        autoscaling=boto3.client("application-autoscaling"),
        cloudwatch=boto3.client("cloudwatch"),
        bucket=bucket or outputs["ArtifactBucketName"],
        topic_arn=outputs.get("AlertTopicArn"),
        dry_run=dry_run,
    )
    for leak in report.leaks:
        console.print(
            f"{leak.action:>12}  {leak.kind:<20} {leak.name}  (expired {leak.expired_at:%Y-%m-%d %H:%M} UTC) {leak.detail}"
        )
    for error in report.errors:
        console.print(f"[red]error[/]: {error}")
    console.print(f"{report.removed} removed, {report.remaining} remaining; report: {report.report_uri}")
    raise typer.Exit(1 if report.remaining or report.errors else 0)


def pipeline_input(
    path: Annotated[Path, typer.Argument(help="A run spec, or with --sweep a sweep file.")],
    is_sweep: Annotated[
        bool, typer.Option("--sweep", help="PATH is a sweep: print the sweep's input.")
    ] = False,
) -> None:
    """Print a state machine's input as JSON, for `aws stepfunctions start-execution --input file://...` or the console."""
    import sys

    from workflows.cli import fail

    try:
        if is_sweep:
            from workflows.sweeps.spec import load_sweep

            payload: dict[str, Any] = {"sweep": load_sweep(path).model_dump(mode="json")}
        else:
            from workflows.contracts import PipelineState
            from workflows.naming import new_run_id
            from workflows.spec import load_spec

            spec = load_spec(path)
            payload = PipelineState(run_id=new_run_id(spec.name), spec=spec).model_dump(mode="json")
    except DeploybenchError as error:
        fail(error)
    sys.stdout.write(json.dumps(payload, indent=2) + "\n")
