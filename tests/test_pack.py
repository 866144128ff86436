from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import pytest

from workflows.conversion.manifest import read_manifest
from workflows.errors import ArtifactIncomplete
from workflows.steps.pack import verify_artifact, write_tarball


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
        "deploybench-manifest.json",
        "model.onnx",
        "code/inference.py",
        "code/requirements.txt",
        "tokenizer/tokenizer.json",
    } <= members
    assert not any(name.startswith(("artifact/", "./")) for name in members)


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
    (artifact / "deploybench-manifest.json").unlink()
    with pytest.raises(ArtifactIncomplete, match="no deploybench-manifest.json"):
        verify_artifact(artifact)
