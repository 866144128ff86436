"""``deploybench sweep``: the deployed stack's scheduled benchmark sweep (or the local one), run by hand."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from workflows.cli.executions import (
    console_url,
    outcome_json,
    print_event,
    readable_cause,
    sweep_id_from,
    sweep_progress,
)
from workflows.cli.options import JsonOption, ProfileOption, RegionOption, StackOption
from workflows.cli.output import (
    FAILED,
    OK,
    RESULTS_DIR,
    aws_session,
    emit,
    guarded,
    out,
    progress,
    stack_outputs,
)
from workflows.naming import STACK_NAME

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client


def _download(s3: S3Client, bucket: str, name: str, sweep_id: str, target: Path) -> list[Path]:
    from workflows.aws.storage import download_folder
    from workflows.naming import SWEEPS_PREFIX

    return download_folder(s3, f"s3://{bucket}/{SWEEPS_PREFIX}{name}/{sweep_id}/", target / sweep_id)


def _local_baseline(s3: S3Client, bucket: str, name: str, folder: Path, *, restore: bool) -> None:
    """The local engine's S3 lives as long as one run: keep a sweep's baseline in the results folder."""
    from workflows.naming import SWEEPS_PREFIX

    key, path = f"{SWEEPS_PREFIX}{name}/baseline.json", folder / "baseline.json"
    if restore and path.exists():
        s3.upload_file(str(path), bucket, key)
    elif not restore and "Contents" in s3.list_objects_v2(Bucket=bucket, Prefix=key):
        folder.mkdir(parents=True, exist_ok=True)
        s3.download_file(bucket, key, str(path))


@guarded
def sweep(
    sweep_path: Annotated[
        Path, typer.Argument(metavar="SWEEP", help="YAML sweep, e.g. examples/sweep-nightly.yaml")
    ],
    local: Annotated[bool, typer.Option("--local", help="Run on the embedded local engine.")] = False,
    results_dir: Annotated[
        Path,
        typer.Option(metavar="DIR", help="summary.json and report.md go to DIR/sweeps/<name>/<sweep id>/."),
    ] = RESULTS_DIR,
    time_scale: Annotated[float, typer.Option(help="Local engine only: how much faster Waits pass.")] = 30.0,
    stack_name: StackOption = STACK_NAME,
    region: RegionOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run a benchmark sweep: each matrix combination as a deploy pipeline (followed live), then one report."""
    from workflows.execution.pipeline import follow
    from workflows.sweeps.download import finish_folder
    from workflows.sweeps.spec import load_sweep

    spec = load_sweep(sweep_path)
    payload = {"sweep": spec.model_dump(mode="json")}
    name = f"{spec.name}-{datetime.now(UTC):%Y%m%d-%H%M%S}"
    folder = results_dir / "sweeps" / spec.name
    if local:
        from workflows.hosting.modes import refuse_unservable_locally
        from workflows.local.engine import BUCKET, LocalEngine
        from workflows.sweeps.spec import expand

        for item in expand(spec):
            refuse_unservable_locally(item.spec.hosting.mode)
        with LocalEngine(workdir=folder / name / "engine", time_scale=time_scale) as engine:
            sfn, s3 = engine.client("stepfunctions"), engine.client("s3")
            _local_baseline(s3, BUCKET, spec.name, folder, restore=True)
            arn = engine.start_execution("benchmark_sweep", payload, name=name)
            children = sweep_progress(sfn, arn, engine.state_machine_arns["deploy_pipeline"])
            outcome = follow(sfn, arn, on_event=print_event, on_poll=children.poll)
            sweep_id = sweep_id_from(sfn, arn)
            files = _download(s3, BUCKET, spec.name, sweep_id, folder) if sweep_id else []
            # The engine's bucket is gone once it stops: each run's files are copied out now.
            kept, decision = finish_folder(s3, BUCKET, folder / sweep_id) if sweep_id else ([], None)
            _local_baseline(s3, BUCKET, spec.name, folder, restore=False)
    else:
        from workflows.naming import OUTPUT_BUCKET, OUTPUT_DEPLOY_PIPELINE_ARN

        session = aws_session(region, profile)
        outputs = stack_outputs(session, stack_name)
        sfn, s3 = session.client("stepfunctions"), session.client("s3")
        arn = sfn.start_execution(
            stateMachineArn=outputs["BenchmarkSweepArn"], name=name, input=json.dumps(payload)
        )["executionArn"]
        progress().print(f"Sweep execution {arn}\nConsole: {console_url(arn)}")
        children = sweep_progress(sfn, arn, outputs[OUTPUT_DEPLOY_PIPELINE_ARN])
        outcome = follow(sfn, arn, on_event=print_event, poll_s=5.0, on_poll=children.poll)
        sweep_id = sweep_id_from(sfn, arn)
        files = _download(s3, outputs[OUTPUT_BUCKET], spec.name, sweep_id, folder) if sweep_id else []
        kept, decision = (
            finish_folder(s3, outputs[OUTPUT_BUCKET], folder / sweep_id) if sweep_id else ([], None)
        )
    files += kept
    outcome.results = files

    def human() -> None:
        out.print(f"\nSweep [bold]{outcome.status}[/] in {outcome.wall_s:.0f} s")
        if outcome.error:
            out.print(f"[red]{outcome.error}[/]: {readable_cause(outcome.cause or '')[:1500]}")
        for path in files:
            out.print(f"  wrote {path}")
        if decision:
            out.print(f"\n[bold]Decision:[/] {decision}.")

    emit(
        {
            "sweep_id": sweep_id,
            "runs": children.finished,
            **outcome_json(outcome, on_aws=not local),
            "decision": decision,
        },
        as_json=as_json,
        human=human,
    )
    raise typer.Exit(OK if outcome.status == "SUCCEEDED" else FAILED)
