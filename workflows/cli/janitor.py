"""``deploybench janitor``: the deployed stack's scheduled leak sweep, run by hand."""

from __future__ import annotations

from typing import Annotated, NoReturn

import typer

from workflows.cli.options import BucketOption, JsonOption, ProfileOption, RegionOption, StackOption
from workflows.cli.output import FAILED, OK, aws_session, emit, guarded, out, stack_outputs
from workflows.naming import STACK_NAME


def _local(*, dry_run: bool, as_json: bool) -> NoReturn:
    """The local janitor: every recorded process group whose run is gone, killed (or, dry, listed), and
    the conversion cache's half-written entries of killed runs removed."""
    from workflows.conversion.cache_stores import LocalStore
    from workflows.local.engine import local_conversion_cache
    from workflows.processes.groups import reap, registry

    reaped = reap(dry_run=dry_run)
    killed = [r for r in reaped if r.processes]
    partials = LocalStore(local_conversion_cache()).reap_partials(dry_run=dry_run)

    def human() -> None:
        for item in reaped:
            out.print(item.line())
        verb = "left running" if dry_run else "reaped"
        out.print(
            f"{len(killed)} process group(s) {verb}, {len(reaped) - len(killed)} record(s) of ended groups; records: {registry()}"
        )
        for name in partials:
            out.print(
                f"conversion cache: {name} (a killed run's half-written entry) {'found' if dry_run else 'removed'}"
            )

    emit(
        {
            "dry_run": dry_run,
            "registry": str(registry()),
            "groups": [
                {
                    "pgid": r.pgid,
                    "what": r.what,
                    "run_id": r.run_id,
                    "results": r.results,
                    "processes": r.processes,
                }
                for r in reaped
            ],
            "partial_cache_entries": partials,
            "reaped": 0 if dry_run else len(killed),
            "remaining": len(killed) if dry_run else 0,
        },
        as_json=as_json,
        human=human,
    )
    raise typer.Exit(OK)


@guarded
def janitor(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be removed; remove nothing.")
    ] = False,
    local: Annotated[
        bool,
        typer.Option(
            "--local",
            help="Reap what killed local runs left: recorded process groups whose run is gone (no AWS call).",
        ),
    ] = False,
    stack_name: StackOption = STACK_NAME,
    bucket: BucketOption = None,
    region: RegionOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Delete SageMaker resources and staging folders of deploybench runs past their TTL (what the hourly schedule does).

    With --local: kill the process groups of local runs that were killed outright (SIGKILL, out of memory)."""
    if local:
        _local(dry_run=dry_run, as_json=as_json)
    from workflows.janitor.cleanup import run_janitor

    session = aws_session(region, profile)
    outputs = stack_outputs(session, stack_name) if not bucket else {}
    report = run_janitor(
        sagemaker=session.client("sagemaker"),
        s3=session.client("s3"),
        sns=session.client("sns"),
        autoscaling=session.client("application-autoscaling"),
        cloudwatch=session.client("cloudwatch"),
        bucket=bucket or outputs["ArtifactBucketName"],
        topic_arn=outputs.get("AlertTopicArn"),
        dry_run=dry_run,
    )

    def human() -> None:
        for leak in report.leaks:
            out.print(
                f"{leak.action:>12}  {leak.kind:<20} {leak.name}  (expired {leak.expired_at:%Y-%m-%d %H:%M} UTC) "
                f"{leak.detail}"
            )
        for error in report.errors:
            out.print(f"[red]error[/]: {error}")
        out.print(f"{report.removed} removed, {report.remaining} remaining; report: {report.report_uri}")

    summary = {"removed": report.removed, "remaining": report.remaining}
    emit({**report.model_dump(mode="json"), **summary}, as_json=as_json, human=human)
    raise typer.Exit(FAILED if report.remaining or report.errors else OK)
