"""Pack step: verified artifact folder -> model.tar.gz in S3, never half-written."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from workflows.artifact.tarball import COPY_BUFFER_BYTES as COPY_BUFFER_BYTES  # bench/pack.py reads it here
from workflows.artifact.tarball import write_tarball
from workflows.artifact.vendoring import vendor_for_spec, vendor_triton_tokenizer
from workflows.aws.storage import download_folder, upload_file, upload_folder
from workflows.contracts import PackRequest, PackResult
from workflows.conversion.manifest import (
    MANIFEST_FILE,
    sha256_of,
    verify_artifact,
)
from workflows.errors import ArtifactIncomplete
from workflows.hosting.triton_repository import TOKENIZER_WHEEL
from workflows.naming import artifact_key
from workflows.remediation.requirements import apply_requirements
from workflows.settings import Settings

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

COMPRESSION_NAMES = {"fast": "gzip-isal-1", "none": "none"}


def pack(request: PackRequest, *, s3: S3Client, settings: Settings, workdir: Path) -> PackResult:
    started = time.perf_counter()
    root = workdir / "artifact"
    download_folder(s3, request.convert.staging_uri, root)
    if not (root / MANIFEST_FILE).is_file():
        raise ArtifactIncomplete(
            f"{request.convert.staging_uri} has no {MANIFEST_FILE}.", fix="run the convert step again"
        )
    verify_artifact(root)
    apply_requirements(root, request.attempt.overrides.extra_requirements)  # F01/F17 remediation
    if vendor_for_spec(root, request.spec, settings):  # F37: an isolated container reaches no index
        # The preflight reads the staged code/: it must see the wheels and the offline requirements.
        upload_folder(s3, root / "code", request.convert.staging_uri.rstrip("/") + "/code/")
    if vendor_triton_tokenizer(root, request.spec):  # the Triton image's Python has no tokenizers
        # Deploy copies it from staging into the model repository, next to the tokenizer's model.py.
        upload_file(
            s3, root / TOKENIZER_WHEEL, request.convert.staging_uri.rstrip("/") + "/" + TOKENIZER_WHEEL
        )
    compression = request.spec.pack.compression
    key = artifact_key(request.run_id, compression)
    tarball = workdir / Path(key).name
    write_tarball(root, tarball, compression)
    # upload_file goes multipart above 64 MB (workflows/aws/storage.py TRANSFER).
    uri = upload_file(s3, tarball, f"s3://{settings.bucket}/{key}")
    return PackResult(
        model_data_uri=uri,
        size_bytes=tarball.stat().st_size,
        sha256=sha256_of(tarball),
        compression=COMPRESSION_NAMES[compression],
        seconds=round(time.perf_counter() - started, 3),
    )
