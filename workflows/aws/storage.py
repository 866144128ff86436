"""S3 transfers of folders and files (multipart for large objects, via boto3's transfer manager)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from boto3.s3.transfer import TransferConfig

from workflows.aws.clients import aws_errors, paginate, split_s3_uri

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

# 64 MB parts, 4 threads: a 1 GB artifact goes up in 16 parts, resumable per part.
TRANSFER = TransferConfig(
    multipart_threshold=64 * 1024 * 1024, multipart_chunksize=64 * 1024 * 1024, max_concurrency=4
)


def upload_file(s3: S3Client, path: Path, uri: str) -> str:
    bucket, key = split_s3_uri(uri)
    with aws_errors(f"upload {path} to {uri}"):
        s3.upload_file(str(path), bucket, key, Config=TRANSFER)
    return uri


def upload_folder(s3: S3Client, root: Path, uri: str, *, last: str | None = None) -> list[str]:
    """Upload every file under ``root`` to the ``uri`` prefix; returns the keys.

    ``last`` (a path relative to ``root``) goes up after every other file, so a reader that waits
    for it (an artifact's manifest) never sees a half-uploaded folder as complete.
    """
    bucket, prefix = split_s3_uri(uri.rstrip("/") + "/")
    keys = []
    paths = sorted(p for p in root.rglob("*") if p.is_file())
    for path in sorted(paths, key=lambda p: p.relative_to(root).as_posix() == last):
        key = prefix + path.relative_to(root).as_posix()
        with aws_errors(f"upload {path}"):
            s3.upload_file(str(path), bucket, key, Config=TRANSFER)
        keys.append(key)
    return keys


def list_keys(s3: S3Client, uri: str) -> list[str]:
    bucket, prefix = split_s3_uri(uri)
    with aws_errors(f"list {uri}"):
        return [
            obj["Key"] for obj in paginate(s3, "list_objects_v2", "Contents", Bucket=bucket, Prefix=prefix)
        ]


def download_folder(s3: S3Client, uri: str, target: Path, *, skip: tuple[str, ...] = ()) -> list[Path]:
    """Download every object under the ``uri`` prefix into ``target``, keeping relative paths, but
    those under the relative folders ``skip`` names (each ending in ``/``)."""
    bucket, prefix = split_s3_uri(uri.rstrip("/") + "/")
    written = []
    for key in list_keys(s3, f"s3://{bucket}/{prefix}"):
        relative = key[len(prefix) :]
        if not relative or relative.endswith("/") or relative.startswith(skip):
            continue
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        with aws_errors(f"download s3://{bucket}/{key}"):
            s3.download_file(bucket, key, str(destination), Config=TRANSFER)
        written.append(destination)
    return written


def delete_prefix(s3: S3Client, uri: str) -> list[str]:
    """Delete every object under the prefix; returns the deleted keys."""
    bucket, _ = split_s3_uri(uri)
    keys = list_keys(s3, uri)
    for start in range(0, len(keys), 1000):
        batch = keys[start : start + 1000]
        with aws_errors(f"delete under {uri}"):
            s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in batch], "Quiet": True})
    return keys


def put_text(s3: S3Client, uri: str, text: str, content_type: str) -> str:
    bucket, key = split_s3_uri(uri)
    with aws_errors(f"write {uri}"):
        s3.put_object(Bucket=bucket, Key=key, Body=text.encode("utf-8"), ContentType=content_type)
    return uri


def get_text(s3: S3Client, uri: str) -> str:
    bucket, key = split_s3_uri(uri)
    with aws_errors(f"read {uri}"):
        return s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode("utf-8")
