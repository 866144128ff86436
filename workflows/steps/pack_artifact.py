"""Pack step: verified artifact folder -> model.tar.gz in S3, never half-written."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from workflows.artifact.tarball import COPY_BUFFER_BYTES as COPY_BUFFER_BYTES  # bench/pack.py reads it here
from workflows.artifact.tarball import write_tarball
from workflows.artifact.vendoring import vendor_for_spec, vendor_triton_tokenizer
from workflows.aws.storage import download_folder, upload_file, upload_folder
from workflows.contracts import PackedDevice, PackRequest, PackResult
from workflows.conversion.manifest import (
    MANIFEST_FILE,
    sha256_of,
    verify_artifact,
)
from workflows.errors import ArtifactIncomplete
from workflows.hosting.triton_repository import TOKENIZER_WHEEL
from workflows.naming import DEVICE_STAGING, artifact_key
from workflows.remediation.requirements import apply_requirements
from workflows.settings import Settings

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

COMPRESSION_NAMES = {"fast": "gzip-isal-1", "none": "none"}


def pack(request: PackRequest, *, s3: S3Client, settings: Settings, workdir: Path) -> PackResult:
    """The run's artifact packed to ``model.tar.gz`` (and, for pools across devices, each further
    device's beside it, under ``artifacts/<run id>/<device>/``)."""
    started = time.perf_counter()
    uri, size, digest = _pack_folder(
        request, request.convert.staging_uri, workdir / "artifact", s3=s3, settings=settings, device=None
    )
    further = []
    for converted in request.convert.device_artifacts:
        root = workdir / f"artifact-{converted.device}"
        device_uri, device_size, device_digest = _pack_folder(
            request, converted.staging_uri, root, s3=s3, settings=settings, device=converted.device
        )
        further.append(
            PackedDevice(
                device=converted.device,
                model_data_uri=device_uri,
                size_bytes=device_size,
                sha256=device_digest,
                onnx_file=converted.manifest.onnx_file,
                precision=converted.manifest.precision,
            )
        )
    return PackResult(
        model_data_uri=uri,
        size_bytes=size,
        sha256=digest,
        compression=COMPRESSION_NAMES[request.spec.pack.compression],
        seconds=round(time.perf_counter() - started, 3),
        device_artifacts=further,
    )


def _pack_folder(
    request: PackRequest,
    staging_uri: str,
    root: Path,
    *,
    s3: S3Client,
    settings: Settings,
    device: str | None,
) -> tuple[str, int, str]:
    """One staged folder verified, completed and packed; returns its URI, size and sha256."""
    # A further device's folder sits under the run's staging prefix: never inside the first's tarball.
    download_folder(s3, staging_uri, root, skip=(DEVICE_STAGING,) if device is None else ())
    if not (root / MANIFEST_FILE).is_file():
        raise ArtifactIncomplete(f"{staging_uri} has no {MANIFEST_FILE}.", fix="run the convert step again")
    verify_artifact(root)
    apply_requirements(root, request.attempt.overrides.extra_requirements)  # F01/F17 remediation
    if vendor_for_spec(root, request.spec, settings):  # F37: an isolated container reaches no index
        # The preflight reads the staged code/: it must see the wheels and the offline requirements.
        upload_folder(s3, root / "code", staging_uri.rstrip("/") + "/code/")
    if vendor_triton_tokenizer(root, request.spec):  # the Triton image's Python has no tokenizers
        # Deploy copies it from staging into the model repository, next to the tokenizer's model.py.
        upload_file(s3, root / TOKENIZER_WHEEL, staging_uri.rstrip("/") + "/" + TOKENIZER_WHEEL)
    compression = request.spec.pack.compression
    key = artifact_key(request.run_id, compression, device)
    tarball = root.parent / f"{device or 'run'}-{Path(key).name}"
    write_tarball(root, tarball, compression)
    # upload_file goes multipart above 64 MB (workflows/aws/storage.py TRANSFER).
    uri = upload_file(s3, tarball, f"s3://{settings.bucket}/{key}")
    return uri, tarball.stat().st_size, sha256_of(tarball)
