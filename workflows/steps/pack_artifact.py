"""Pack step: verified artifact folder -> model.tar.gz in S3, never half-written."""

from __future__ import annotations

import os
import tarfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from workflows.artifact.vendoring import vendor_for_spec, vendor_triton_tokenizer
from workflows.aws.storage import download_folder, upload_file, upload_folder
from workflows.contracts import PackRequest, PackResult
from workflows.conversion.manifest import (
    MANIFEST_FILE,
    sha256_of,
    verify_artifact,
)
from workflows.errors import ArtifactIncomplete, OutputNotWritable
from workflows.hosting.triton_repository import TOKENIZER_WHEEL
from workflows.naming import artifact_key
from workflows.remediation.requirements import apply_requirements
from workflows.settings import Settings

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

# fp32 ONNX weights barely compress: gzip level 9 took 63 s for 200 MB to save 7% over level 1 (F24).
# ISA-L level 1 writes the same gzip format about 10x faster than zlib level 1 (bench/pack.py).
COMPRESSION_LEVEL = 1
COMPRESSION_NAMES = {"fast": "gzip-isal-1", "none": "none"}
# tarfile copies member data in 16 KiB blocks by default; larger writes keep ISA-L's buffers full.
COPY_BUFFER_BYTES = 4 * 1024 * 1024


def _open_output(path: Path, compression: str) -> BinaryIO:
    if compression == "none":
        return path.open("wb")
    from isal import igzip

    return igzip.open(path, "wb", compresslevel=COMPRESSION_LEVEL)  # type: ignore[return-value]


def write_tarball(root: Path, target: Path, compression: str) -> None:
    """Tar ``root``'s contents at the top level (no nested folder), atomically.

    The archive is written under a temporary name beside ``target`` and renamed when complete,
    so ``target`` is either the whole archive or absent.

    Raises:
        OutputNotWritable: ``target``'s folder cannot be written.
    """
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    try:
        raw = _open_output(partial, compression)
    except OSError as error:
        raise OutputNotWritable(
            f"cannot write {target}: {error.strerror or error}.",
            fix="choose a writable folder for the tarball",
        ) from None
    try:
        members = sorted(p for p in root.rglob("*") if p.is_file())
        with raw, tarfile.TarFile(fileobj=raw, mode="w", copybufsize=COPY_BUFFER_BYTES) as archive:
            for path in members:
                archive.add(path, arcname=path.relative_to(root).as_posix(), recursive=False)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


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
