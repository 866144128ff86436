"""``deploybench janitor``: the deployed stack's scheduled leak sweep, run by hand."""

from __future__ import annotations

from typing import Annotated

import typer

from workflows.cli.options import BucketOption, JsonOption, ProfileOption, RegionOption, StackOption
from workflows.cli.output import FAILED, OK, aws_session, emit, guarded, out, stack_outputs
from workflows.naming import STACK_NAME


@guarded
def janitor(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be removed; remove nothing.")
    ] = False,
    stack_name: StackOption = STACK_NAME,
    bucket: BucketOption = None,
    region: RegionOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Delete SageMaker resources and staging folders of deploybench runs past their TTL (what the hourly schedule does)."""
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
