"""The janitor: find what deploybench runs left behind past their time to live, delete it, report it.

A leaked endpoint is the costliest failure in this field (an idle ml.g5.12xlarge bills about
$7 an hour until someone notices). Teardown deletes a run's resources on every path, but a
run can still leak: an execution stopped by hand skips its Catch, a stalled endpoint stays
undeletable past teardown's retries (F06). Every SageMaker resource a run creates is named
``db-<run id>-...`` and tagged ``deploybench:managed=true`` and ``deploybench:expires-at``; the
janitor deletes those past that time (tagged ``deploybench:keep=true`` are left alone), stops
processing jobs still running past it, removes scale to zero's scalable targets, policies and alarms
with their component, and staging folders older than the TTL. The expiry a run writes is derived
from its own budgets (``workflows/janitor/lifetime.py``), so a live run is never reaped.

A run across Regions (``hosting.regions``) leaves endpoints, configs, models and a staged artifact copy
(``<bucket>-<region>``) in Regions other than the stack's: the janitor sweeps each Region the stack allows
(``DEPLOYBENCH_JANITOR_REGIONS``, default its own) the same way, by tag, with that Region's client; their
leaks and errors are named ``<region>/...``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from workflows import clock
from workflows.aws.clients import aws_errors, paginate
from workflows.aws.storage import delete_prefix, put_text
from workflows.hosting import resources
from workflows.hosting.region_staging import MISSING, region_bucket
from workflows.hosting.resources import ResourceKind, delete_call, sagemaker_kinds
from workflows.hosting.routed import INFERENCE_ROUTER
from workflows.janitor.leaks import Action, JanitorReport, Leak, act, expiry
from workflows.janitor.scaling import ComponentExpiry, sweep_alarms, sweep_scaling
from workflows.naming import DEFAULT_TTL, PREFIX

if TYPE_CHECKING:
    from types_boto3_application_autoscaling import ApplicationAutoScalingClient
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_s3 import S3Client
    from types_boto3_sagemaker import SageMakerClient
    from types_boto3_sns import SNSClient

STAGING = "staging/"
REPORTS_PREFIX = "janitor/"
# Where the janitor handler finds the alert topic (set by the CDK stack).
TOPIC_ENV = "DEPLOYBENCH_ALERT_TOPIC_ARN"
REGIONS_ENV = "DEPLOYBENCH_JANITOR_REGIONS"
"""The Regions a run may use (comma-separated, set by the stack): the janitor sweeps each besides its own."""
Regional = Callable[[str], Any]
"""A Region's SageMaker client, by Region name."""


def other_regions(value: str | None, home: str) -> list[str]:
    """The Regions of ``REGIONS_ENV``'s value other than ``home``, in order, each once."""
    named = [region.strip() for region in (value or "").split(",") if region.strip()]
    return [region for region in dict.fromkeys(named) if region != home]


# A run across Regions' router first (it sends traffic to the endpoints), then the table's SageMaker rows
# in its order: inference components first (an endpoint that still hosts components cannot be deleted),
# running processing jobs last (only those cost anything).
KINDS: tuple[ResourceKind, ...] = (INFERENCE_ROUTER, *sagemaker_kinds(janitor=True))


def _tags(sagemaker: SageMakerClient, arn: str) -> dict[str, str]:
    with aws_errors(f"list tags of {arn}"):
        return {t["Key"]: t["Value"] for t in paginate(sagemaker, "list_tags", "Tags", ResourceArn=arn)}


def _sweep_kind(
    kind: ResourceKind, *, sagemaker: SageMakerClient, now: datetime, ttl: timedelta, dry_run: bool
) -> list[Leak]:
    stop = kind.stops
    leaks: list[Leak] = []
    for name, item in resources.find(sagemaker, kind, f"{PREFIX}-").items():
        if kind.is_going(item):
            continue
        expires = expiry(_tags(sagemaker, item[str(kind.arn_key)]), item.get("CreationTime"), ttl)
        if expires is None or expires > now:
            continue
        if dry_run:
            leaks.append(
                Leak(
                    kind=kind.name,
                    name=name,
                    expired_at=expires,
                    action="would_stop" if stop else "would_delete",
                )
            )
            continue
        outcome, detail = act(delete_call(sagemaker, kind), **{kind.name_key: name})
        if outcome is not None:
            done: Action = "stopped" if stop and outcome == "deleted" else outcome
            leaks.append(Leak(kind=kind.name, name=name, expired_at=expires, action=done, detail=detail))
    return leaks


def _sweep_staging(*, s3: S3Client, bucket: str, now: datetime, ttl: timedelta, dry_run: bool) -> list[Leak]:
    """Staging folders (converted models) whose newest object is older than the TTL."""
    leaks: list[Leak] = []
    with aws_errors(f"list s3://{bucket}/{STAGING}"):
        prefixes = paginate(
            s3, "list_objects_v2", "CommonPrefixes", Bucket=bucket, Prefix=STAGING, Delimiter="/"
        )
    for entry in prefixes:
        prefix = entry["Prefix"]
        with aws_errors(f"list s3://{bucket}/{prefix}"):
            objects = paginate(s3, "list_objects_v2", "Contents", Bucket=bucket, Prefix=prefix)
        if not objects:
            continue
        expires = max(o["LastModified"] for o in objects) + ttl
        if expires > now:
            continue
        if not dry_run:
            delete_prefix(s3, f"s3://{bucket}/{prefix}")
        leaks.append(
            Leak(
                kind=resources.STAGING.name,
                name=f"s3://{bucket}/{prefix}",
                expired_at=expires,
                action="would_delete" if dry_run else "deleted",
            )
        )
    return leaks


def _bucket_exists(s3: S3Client, bucket: str) -> bool:
    try:
        s3.head_bucket(Bucket=bucket)
    except ClientError as error:
        if str(error.response.get("Error", {}).get("Code")) in MISSING:
            return False
        raise
    return True


def _sweep_region(
    region: str, *, sagemaker: SageMakerClient, s3: S3Client, bucket: str, now: datetime, ttl: timedelta,
    dry_run: bool, report: JanitorReport,
) -> None:  # fmt: skip
    """Another Region's SageMaker resources, then the runs' staged copies in that Region's bucket."""
    for kind in KINDS:
        try:
            found = _sweep_kind(kind, sagemaker=sagemaker, now=now, ttl=ttl, dry_run=dry_run)
        except Exception as error:  # one kind's failure must not stop the others (a leak costs money)
            report.errors.append(f"{region}/{kind.name}: {error}")
            continue
        report.leaks += [leak.model_copy(update={"name": f"{region}/{leak.name}"}) for leak in found]
    there = region_bucket(bucket, region)
    try:
        if _bucket_exists(s3, there):
            report.leaks += _sweep_staging(s3=s3, bucket=there, now=now, ttl=ttl, dry_run=dry_run)
    except Exception as error:
        report.errors.append(f"{region}/staging: {error}")


def find_and_remove(
    *,
    sagemaker: SageMakerClient,
    s3: S3Client,
    bucket: str,
    autoscaling: ApplicationAutoScalingClient | None = None,
    cloudwatch: CloudWatchClient | None = None,
    now: datetime | None = None,
    ttl: timedelta = DEFAULT_TTL,
    dry_run: bool = False,
    regions: Sequence[str] = (),
    regional: Regional | None = None,
) -> JanitorReport:
    """Delete (or, with ``dry_run``, only list) every expired deploybench resource.

    With the ``autoscaling`` and ``cloudwatch`` clients, scale to zero's scalable targets, scaling
    policies and alarms are swept first (``workflows/janitor/scaling.py``): a target must go before
    its component. A listing that fails (an API the region lacks, a missing permission) is recorded
    in ``errors`` and the other kinds are still swept. Each of ``regions`` (other than the stack's) is swept
    with ``regional``'s client of that Region: its SageMaker resources and its staging bucket.
    """
    moment = now or clock.now()
    report = JanitorReport(checked_at=moment, dry_run=dry_run)
    components = ComponentExpiry(sagemaker, now=moment, ttl=ttl)
    if autoscaling is not None:
        try:
            report.leaks += sweep_scaling(
                autoscaling=autoscaling, component_expiry=components, now=moment, dry_run=dry_run
            )
        except Exception as error:  # one kind's failure must not stop the others (a leak costs money)
            report.errors.append(f"scalable-target: {error}")
    if cloudwatch is not None:
        try:
            report.leaks += sweep_alarms(
                cloudwatch=cloudwatch, component_expiry=components, now=moment, ttl=ttl, dry_run=dry_run
            )
        except Exception as error:
            report.errors.append(f"alarm: {error}")
    for kind in KINDS:
        try:
            report.leaks += _sweep_kind(kind, sagemaker=sagemaker, now=moment, ttl=ttl, dry_run=dry_run)
        except Exception as error:  # one kind's failure must not stop the others (a leak costs money)
            report.errors.append(f"{kind.name}: {error}")
    try:
        report.leaks += _sweep_staging(s3=s3, bucket=bucket, now=moment, ttl=ttl, dry_run=dry_run)
    except Exception as error:
        report.errors.append(f"staging: {error}")
    for region in regions:
        if regional is None:
            raise ValueError(f"sweeping {region} needs that Region's SageMaker client: pass regional")
        _sweep_region(
            region, sagemaker=regional(region), s3=s3, bucket=bucket, now=moment, ttl=ttl, dry_run=dry_run,
            report=report,
        )  # fmt: skip
    return report


def publish(
    report: JanitorReport, *, s3: S3Client, sns: SNSClient, bucket: str, topic_arn: str | None
) -> JanitorReport:
    """Write the report to ``janitor/<time>.json``; notify the topic when anything was found or failed."""
    stamp = report.checked_at.strftime("%Y%m%dT%H%M%SZ")
    uri = put_text(
        s3,
        f"s3://{bucket}/{REPORTS_PREFIX}{stamp}.json",
        report.model_dump_json(indent=2),
        "application/json",
    )
    report = report.model_copy(update={"report_uri": uri})
    if topic_arn and (report.leaks or report.errors):
        lines = [
            f"{leak.action}: {leak.kind} {leak.name} (expired {leak.expired_at:%Y-%m-%d %H:%M} UTC) {leak.detail}"
            for leak in report.leaks
        ]
        lines += [f"error: {e}" for e in report.errors]
        with aws_errors(f"publish to {topic_arn}"):
            sns.publish(
                TopicArn=topic_arn,
                # SNS subjects: at most 100 characters.
                Subject=f"deploybench janitor: {report.removed} removed, {report.remaining} remaining"[:100],
                Message="\n".join(lines)
                + f"\n\nreport: {uri}\n"
                + json.dumps({"removed": report.removed, "remaining": report.remaining}),
            )
    return report


def run_janitor(
    *,
    sagemaker: SageMakerClient,
    s3: S3Client,
    sns: SNSClient,
    bucket: str,
    topic_arn: str | None,
    dry_run: bool = False,
    now: datetime | None = None,
    autoscaling: ApplicationAutoScalingClient | None = None,
    cloudwatch: CloudWatchClient | None = None,
    regions: Sequence[str] = (),
    regional: Regional | None = None,
) -> JanitorReport:
    """One janitor pass: find and remove (in the stack's Region and each of ``regions``), then write and
    announce the report."""
    report = find_and_remove(
        sagemaker=sagemaker,
        s3=s3,
        bucket=bucket,
        autoscaling=autoscaling,
        cloudwatch=cloudwatch,
        now=now,
        dry_run=dry_run,
        regions=regions,
        regional=regional,
    )
    return publish(report, s3=s3, sns=sns, bucket=bucket, topic_arn=topic_arn)
