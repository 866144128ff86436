"""Every object deploybench writes names the stack's KMS key (SSE-KMS, bucket key on).

The bucket's default encryption would apply the key anyway; naming it on every write keeps objects
encrypted with the customer's key under a bucket policy that refuses writes without the SSE-KMS
headers (a common control in locked-down accounts), and after someone changes the bucket's default.
One hook on the S3 client covers every write path: PutObject, the transfer manager's multipart
uploads (CreateMultipartUpload) and CopyObject.
"""

from __future__ import annotations

from typing import Any

WRITES = ("PutObject", "CreateMultipartUpload", "CopyObject")


def encrypt_writes(s3: Any, key_arn: str | None) -> Any:
    """Make every object write of ``s3`` name ``key_arn``; returns the client (unchanged without a key).

    A write that already names its own encryption keeps it.
    """
    if not key_arn:
        return s3

    def add_key(params: dict[str, Any], **_: Any) -> None:
        if "ServerSideEncryption" not in params:
            params.update(ServerSideEncryption="aws:kms", SSEKMSKeyId=key_arn, BucketKeyEnabled=True)

    for operation in WRITES:
        s3.meta.events.register(f"before-parameter-build.s3.{operation}", add_key)
    return s3
