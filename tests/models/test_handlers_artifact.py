"""The artifact handlers, called as Lambda calls them, on moto's S3: convert, pack, preflight.

Each runs a real conversion or loads a real graph (the tiny BERT), so they are in the slow tier.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from lambdas import convert_to_onnx, pack_artifact, run_preflight
from tests.conftest import fast_spec
from tests.support.aws import Aws
from tests.support.handlers import invoke
from workflows.aws.storage import upload_folder
from workflows.contracts import (
    ConvertResult,
    PackRequest,
    PackResult,
    PreflightRequest,
    PreflightResult,
    StepRequest,
)
from workflows.conversion.manifest import MANIFEST_FILE, read_manifest
from workflows.naming import source_prefix, staging_prefix

pytestmark = pytest.mark.slow


def staged(aws: Aws, artifact: Path, run_id: str) -> ConvertResult:
    """The converted folder in the run's staging prefix, as ConvertToOnnx leaves it (manifest last)."""
    uri = f"s3://{aws.bucket}/{staging_prefix(run_id)}"
    upload_folder(aws.s3, artifact, uri, last=MANIFEST_FILE)
    return ConvertResult(staging_uri=uri, manifest=read_manifest(artifact), seconds=1.0)


def test_convert_to_onnx_converts_the_uploaded_model_into_the_staging_prefix(
    aws: Aws, tiny_bert: Path
) -> None:
    # Given the run's model folder uploaded under its sources/ prefix
    source = f"s3://{aws.bucket}/{source_prefix('h-convert')}"
    upload_folder(aws.s3, tiny_bert, source)
    event = StepRequest(run_id="h-convert", spec=fast_spec(source))
    # When ConvertToOnnx runs
    result = ConvertResult.model_validate(invoke(convert_to_onnx, event))
    # Then the verified graph and its manifest are in the staging prefix, the manifest naming every file
    assert result.staging_uri == f"s3://{aws.bucket}/{staging_prefix('h-convert')}"
    assert result.manifest.parity.passed
    listed = aws.s3.list_objects_v2(Bucket=aws.bucket, Prefix=staging_prefix("h-convert"))["Contents"]
    keys = {o["Key"].removeprefix(staging_prefix("h-convert")) for o in listed}
    assert {MANIFEST_FILE, result.manifest.onnx_file} <= keys
    assert {f.path for f in result.manifest.files} <= keys


def test_pack_artifact_writes_the_verified_tarball(aws: Aws, tiny_artifact: Path) -> None:
    # Given the converted folder staged
    convert = staged(aws, tiny_artifact, "h-pack")
    event = PackRequest(
        run_id="h-pack", spec=fast_spec("bundled", pack={"compression": "none"}), convert=convert
    )
    # When PackArtifact runs
    result = PackResult.model_validate(invoke(pack_artifact, event))
    # Then the tarball (uncompressed, as the spec asks) is in the run's artifacts prefix, of the size
    # it reports, holding the manifest
    key = result.model_data_uri.removeprefix(f"s3://{aws.bucket}/")
    assert (key, result.compression) == ("artifacts/h-pack/model.tar", "none")
    assert aws.s3.head_object(Bucket=aws.bucket, Key=key)["ContentLength"] == result.size_bytes
    local = aws.s3.get_object(Bucket=aws.bucket, Key=key)["Body"]
    with tarfile.open(fileobj=local, mode="r|") as tar:
        assert MANIFEST_FILE in {member.name.removeprefix("./") for member in tar}


def test_run_preflight_checks_the_staged_artifact_and_passes_a_sound_one(
    aws: Aws, tiny_artifact: Path
) -> None:
    # Given the staged folder and its tarball (PackArtifact's result)
    convert = staged(aws, tiny_artifact, "h-preflight")
    spec = fast_spec("bundled", pack={"compression": "none"})
    pack = PackResult.model_validate(
        invoke(pack_artifact, PackRequest(run_id="h-preflight", spec=spec, convert=convert))
    )
    # When RunPreflight runs
    result = PreflightResult.model_validate(
        invoke(run_preflight, PreflightRequest(run_id="h-preflight", spec=spec, convert=convert, pack=pack))
    )
    # Then the artifact checks ran on the staged folder (its graph loaded, its tokenizer matched) and
    # found nothing: a blocking finding would have raised PreflightBlocked
    checked = " ".join(result.checked)
    assert "F22 artifact files complete and ONNX loads" in result.checked
    assert "F03 tokenizer outputs vs graph inputs" in result.checked
    assert "PackArtifact verified" in checked and pack.sha256[:12] in checked
    assert result.findings == []
