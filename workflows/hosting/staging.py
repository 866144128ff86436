"""Engine model data written under the run's staging prefix: an uncompressed S3 prefix per attempt.

Triton and LMI read a folder, not code/inference.py, so their modes lay one out in S3 (generated
text files, and server-side copies of the converted artifact or the model source) and hand it to
SageMaker as ``ModelDataSource.S3DataSource`` (S3Prefix, CompressionType None): it lands in
/opt/ml/model as is. Being under ``staging/<run id>/`` it goes with the run's teardown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workflows.aws.clients import aws_errors, split_s3_uri
from workflows.aws.storage import TRANSFER, get_text, list_keys
from workflows.contracts import ArtifactManifest
from workflows.conversion.manifest import MANIFEST_FILE
from workflows.naming import staging_prefix

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client


@dataclass(frozen=True)
class StagedFile:
    """A file of the prefix: ``text`` written, or the object ``source`` (s3://...) copied."""

    path: str
    text: str | None = None
    source: str | None = None


def staging_uri(bucket: str, run_id: str) -> str:
    return f"s3://{bucket}/{staging_prefix(run_id)}"


def engine_uri(bucket: str, run_id: str, attempt: int, engine: str) -> str:
    """Where an attempt's engine folder goes (one per attempt: a redeploy never mixes two)."""
    return f"{staging_uri(bucket, run_id)}a{attempt}/{engine}/"


def read_manifest(s3: S3Client, bucket: str, run_id: str) -> ArtifactManifest:
    """The converted artifact's manifest from the staging folder (the convert step wrote it)."""
    return ArtifactManifest.model_validate_json(get_text(s3, staging_uri(bucket, run_id) + MANIFEST_FILE))


def write_prefix(s3: S3Client, uri: str, staged: list[StagedFile]) -> list[str]:
    """Write every file under ``uri``; copies stay in S3 (multipart for large objects)."""
    bucket, prefix = split_s3_uri(uri)
    keys = []
    for item in staged:
        key = prefix + item.path
        if item.text is not None:
            with aws_errors(f"write s3://{bucket}/{key}"):
                s3.put_object(Bucket=bucket, Key=key, Body=item.text.encode("utf-8"))
        else:
            source_bucket, source_key = split_s3_uri(str(item.source))
            with aws_errors(f"copy {item.source} to s3://{bucket}/{key}"):
                s3.copy({"Bucket": source_bucket, "Key": source_key}, bucket, key, Config=TRANSFER)
        keys.append(key)
    return keys


def copies_of_prefix(s3: S3Client, source_uri: str, into: str) -> list[StagedFile]:
    """Copies of every object under an s3:// prefix, placed under the relative folder ``into``."""
    bucket, prefix = split_s3_uri(source_uri.rstrip("/") + "/")
    return [
        StagedFile(f"{into}/{key[len(prefix) :]}", source=f"s3://{bucket}/{key}")
        for key in list_keys(s3, f"s3://{bucket}/{prefix}")
        if not key.endswith("/")
    ]


def uncompressed_model_data(uri: str) -> dict[str, Any]:
    """``ModelDataSource`` for an S3 prefix that SageMaker copies to /opt/ml/model unchanged."""
    return {"S3DataSource": {"S3Uri": uri, "S3DataType": "S3Prefix", "CompressionType": "None"}}
