from __future__ import annotations

import hashlib
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from boto3.s3.transfer import TransferConfig

from tests.conftest import convert_folder, fast_spec
from tests.support.aws import Aws
from workflows.artifact.tarball import write_tarball
from workflows.aws import storage
from workflows.contracts import ConvertResult, PackRequest
from workflows.conversion.manifest import MANIFEST_FILE, read_manifest, verify_artifact
from workflows.errors import ArtifactIncomplete, OutputNotWritable
from workflows.settings import Settings
from workflows.steps.pack_artifact import pack

SETTINGS = Settings(bucket="pack-bucket", sagemaker_role_arn="arn:aws:iam::123456789012:role/sm")


def copy_of(artifact: Path, tmp_path: Path) -> Path:
    target = tmp_path / "artifact"
    shutil.copytree(artifact, target)
    return target


@pytest.mark.parametrize(("compression", "mode"), [("fast", "r:gz"), ("none", "r:")])
def test_tarball_has_the_sagemaker_layout(
    tiny_artifact: Path, tmp_path: Path, compression: str, mode: str
) -> None:
    target = tmp_path / "model.tar.gz"
    write_tarball(tiny_artifact, target, compression)
    with tarfile.open(target, mode) as archive:
        members = set(archive.getnames())
    # No nested top folder: SageMaker unpacks into /opt/ml/model directly.
    assert {
        MANIFEST_FILE,
        "model.onnx",
        "code/inference.py",
        "code/requirements.txt",
        "tokenizer/tokenizer.json",
    } <= members
    assert not any(name.startswith(("artifact/", "./")) for name in members)
    # And every byte of every file survives the round trip
    with tarfile.open(target, mode) as archive:
        onnx = archive.extractfile("model.onnx")
        assert onnx is not None and onnx.read() == (tiny_artifact / "model.onnx").read_bytes()


def test_a_failed_pack_leaves_no_file(
    tiny_artifact: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "model.tar.gz"

    def broken_add(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(tarfile.TarFile, "add", broken_add)
    with pytest.raises(OSError, match="disk full"):
        write_tarball(tiny_artifact, target, "fast")
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_target_is_named(tiny_artifact: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OutputNotWritable, match=r"cannot write .*file/model.tar.gz"):
        write_tarball(tiny_artifact, blocker / "model.tar.gz", "fast")
    assert list(tmp_path.iterdir()) == [blocker]


def test_verified_artifact_passes(tiny_artifact: Path) -> None:
    verify_artifact(tiny_artifact)
    manifest = read_manifest(tiny_artifact)
    assert manifest.onnx_file == "model.onnx"
    assert manifest.parity.passed


def test_truncated_weights_are_refused(tiny_artifact: Path, tmp_path: Path) -> None:
    # Given an artifact whose ONNX file lost its tail (an interrupted copy, F22)
    artifact = copy_of(tiny_artifact, tmp_path)
    onnx = artifact / "model.onnx"
    onnx.write_bytes(onnx.read_bytes()[: onnx.stat().st_size // 2])
    # Then verification names the file and the cause
    with pytest.raises(ArtifactIncomplete, match="model.onnx is .* bytes, the manifest says"):
        verify_artifact(artifact)


def test_replaced_file_is_refused(tiny_artifact: Path, tmp_path: Path) -> None:
    artifact = copy_of(tiny_artifact, tmp_path)
    requirements = artifact / "code" / "requirements.txt"
    text = requirements.read_text()
    requirements.write_text(text.replace("=", "~"))
    with pytest.raises(ArtifactIncomplete, match="sha256"):
        verify_artifact(artifact)


def test_missing_manifest_is_refused(tiny_artifact: Path, tmp_path: Path) -> None:
    artifact = copy_of(tiny_artifact, tmp_path)
    (artifact / MANIFEST_FILE).unlink()
    with pytest.raises(ArtifactIncomplete, match=f"no {MANIFEST_FILE}"):
        verify_artifact(artifact)


@pytest.fixture
def aws_bucket() -> str:
    return SETTINGS.bucket


@pytest.fixture
def s3(aws: Aws) -> Any:
    return aws.s3


def staged(s3: Any, artifact: Path, run_id: str) -> PackRequest:
    uri = f"s3://{SETTINGS.bucket}/staging/{run_id}/"
    storage.upload_folder(s3, artifact, uri, last=MANIFEST_FILE)
    spec = fast_spec("bundled", pack={"compression": "none"})
    convert = ConvertResult(staging_uri=uri, manifest=read_manifest(artifact), seconds=1.0)
    return PackRequest(run_id=run_id, spec=spec, convert=convert)


def test_pack_uploads_large_tarballs_in_parts(
    s3: Any, random_model: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a staged artifact whose tarball (about 7 MB) is above a 5 MB multipart threshold
    # (S3's smallest part; production uses 64 MB parts, storage.TRANSFER)
    artifact = convert_folder(random_model("bert", hidden=48), tmp_path / "convert", optimize="none")
    request = staged(s3, artifact, "pack-multipart")
    five_mb = 5 * 1024 * 1024
    monkeypatch.setattr(
        storage, "TRANSFER", TransferConfig(multipart_threshold=five_mb, multipart_chunksize=five_mb)
    )
    # When packed
    result = pack(request, s3=s3, settings=SETTINGS, workdir=tmp_path / "work")
    # Then the object went up in two parts, and it is the tarball the result describes
    head = s3.head_object(Bucket=SETTINGS.bucket, Key=result.model_data_uri.split("/", 3)[3])
    assert head["ETag"].strip('"').endswith("-2")
    body = s3.get_object(Bucket=SETTINGS.bucket, Key=result.model_data_uri.split("/", 3)[3])["Body"].read()
    assert len(body) == result.size_bytes > five_mb
    assert hashlib.sha256(body).hexdigest() == result.sha256
    assert result.compression == "none" and result.model_data_uri.endswith("/model.tar")


def test_pack_refuses_a_staging_prefix_without_manifest(s3: Any, tiny_artifact: Path, tmp_path: Path) -> None:
    # Given a staging prefix whose upload stopped before the manifest (it goes up last)
    artifact = copy_of(tiny_artifact, tmp_path)
    request = staged(s3, artifact, "pack-partial")
    key = request.convert.staging_uri.split("/", 3)[3] + MANIFEST_FILE
    s3.delete_object(Bucket=SETTINGS.bucket, Key=key)
    # Then pack refuses it, and no tarball was uploaded
    with pytest.raises(ArtifactIncomplete, match=f"has no {MANIFEST_FILE}"):
        pack(request, s3=s3, settings=SETTINGS, workdir=tmp_path / "work")
    assert "Contents" not in s3.list_objects_v2(Bucket=SETTINGS.bucket, Prefix="artifacts/")


def test_the_manifest_is_uploaded_last(tiny_artifact: Path) -> None:
    uploaded: list[str] = []

    class Recorder:
        def upload_file(self, path: str, bucket: str, key: str, Config: Any) -> None:  # noqa: N803
            uploaded.append(key.rsplit("/", 1)[-1])

    storage.upload_folder(Recorder(), tiny_artifact, "s3://b/staging/x/", last=MANIFEST_FILE)
    assert uploaded[-1] == MANIFEST_FILE
    assert len(uploaded) == len(read_manifest(tiny_artifact).files) + 1
