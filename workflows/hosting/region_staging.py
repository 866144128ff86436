"""The run's artifact in another Region: SageMaker reads model data only from a bucket of the endpoint's Region.

When a run moves to the next Region of ``hosting.regions`` (F06 past the last instance type), the packed
model.tar.gz is copied server-side to ``<bucket>-<region>`` under the run's staging prefix, and that Region's
Model names the copy; with instance pools over CPU and GPU types, each further device's artifact is copied too,
and that device's Model names its copy. The stack's own key is a KMS key of the primary Region, which another Region cannot
use, so the copy is written with S3-managed keys (SSE-S3). Teardown deletes the run's staging prefix in
each Region's bucket; the bucket stays, as the primary's does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from workflows.aws.clients import aws_errors, split_s3_uri
from workflows.aws.storage import TRANSFER, list_keys
from workflows.naming import staging_prefix

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

NO_LOCATION_CONSTRAINT = "us-east-1"
"""CreateBucket refuses a LocationConstraint naming us-east-1, its default."""
MISSING = {"404", "NoSuchBucket", "NotFound"}
DELETE_BATCH = 1000
"""DeleteObjects takes at most 1000 keys a call."""


def region_bucket(bucket: str, region: str) -> str:
    """The staging bucket of ``region`` for the stack whose bucket is ``bucket``."""
    return f"{bucket}-{region}"


def _ensure_bucket(s3: S3Client, bucket: str, region: str) -> None:
    try:
        s3.head_bucket(Bucket=bucket)
        return
    except ClientError as error:
        if str(error.response.get("Error", {}).get("Code")) not in MISSING:
            raise
    location = {} if region == NO_LOCATION_CONSTRAINT else {"LocationConstraint": region}
    with aws_errors(f"create bucket {bucket} in {region}"):
        s3.create_bucket(Bucket=bucket, **({"CreateBucketConfiguration": location} if location else {}))  # type: ignore[arg-type]


def stage_in_region(
    s3: S3Client, model_data_uri: str, *, bucket: str, region: str, run_id: str, device: str | None = None
) -> str:
    """Copy the packed artifact to ``region``'s staging bucket; returns the copy's ``s3://`` URI.

    Args:
        s3: an S3 client (a copy across Regions is one server-side CopyObject, or parts past 8 MiB).
        model_data_uri: the packed model.tar.gz in the primary Region.
        bucket: the primary Region's bucket (the stack's).
        region: the Region the endpoint goes to.
        run_id: the run (the copy sits under its staging prefix, which teardown deletes).
        device: a further device's artifact (pools across devices): its copy sits in the device's own
            folder, since every device's artifact is named model.tar.gz.
    """
    target = region_bucket(bucket, region)
    _ensure_bucket(s3, target, region)
    source_bucket, source_key = split_s3_uri(model_data_uri)
    folder = f"{staging_prefix(run_id)}{region}/{f'{device}/' if device else ''}"
    key = f"{folder}{source_key.rsplit('/', 1)[-1]}"
    with aws_errors(f"copy {model_data_uri} to s3://{target}/{key}"):
        s3.copy(
            {"Bucket": source_bucket, "Key": source_key},
            target,
            key,
            ExtraArgs={"ServerSideEncryption": "AES256"},
            Config=TRANSFER,
        )
    return f"s3://{target}/{key}"


def staged_keys(s3: S3Client, bucket: str, region: str, run_id: str) -> list[str]:
    """The run's staged objects in ``region``'s bucket; none where that bucket was never made."""
    target = region_bucket(bucket, region)
    try:
        s3.head_bucket(Bucket=target)
    except ClientError as error:
        if str(error.response.get("Error", {}).get("Code")) in MISSING:
            return []
        raise
    return list_keys(s3, f"s3://{target}/{staging_prefix(run_id)}")


def delete_staged(s3: S3Client, bucket: str, regions: list[str], run_id: str) -> list[str]:
    """Delete the run's staged objects in each of ``regions``' buckets; the prefixes emptied."""
    deleted = []
    for region in regions:
        keys = staged_keys(s3, bucket, region, run_id)
        target = region_bucket(bucket, region)
        for start in range(0, len(keys), DELETE_BATCH):
            batch = [{"Key": key} for key in keys[start : start + DELETE_BATCH]]
            with aws_errors(f"delete the run's staged objects of s3://{target}"):
                s3.delete_objects(Bucket=target, Delete={"Objects": batch, "Quiet": True})  # type: ignore[typeddict-item]
        if keys:
            deleted.append(f"s3://{target}/{staging_prefix(run_id)}")
    return deleted


def staged_left(s3: S3Client, bucket: str, regions: list[str], run_id: str) -> list[str]:
    """The run's staged objects still in ``regions``' buckets, as ``s3://`` URIs."""
    return [
        f"s3://{region_bucket(bucket, region)}/{key}"
        for region in regions
        for key in staged_keys(s3, bucket, region, run_id)
    ]
