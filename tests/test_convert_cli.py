"""``deploybench convert``: a model folder to an artifact folder and its tarball, from the command line."""

from __future__ import annotations

import tarfile
from pathlib import Path

import yaml
from typer.testing import CliRunner

from workflows.cli.app import app
from workflows.conversion.manifest import MANIFEST_FILE, read_manifest, verify_artifact

runner = CliRunner()


def test_convert_and_pack_a_model_folder(tiny_bert: Path, tmp_path: Path) -> None:
    # When a model folder is converted with --pack
    out = tmp_path / "minilm-tiny"
    result = runner.invoke(
        app,
        ["convert", str(tiny_bert), "--out", str(out), "--optimize", "none", "--max-length", "64", "--pack"],
    )
    # Then the artifact folder is complete and the tarball sits beside it, without a nested folder
    assert result.exit_code == 0, result.output
    verify_artifact(out)
    assert read_manifest(out).max_sequence_length == 64
    assert "model.onnx, fp32" in result.output
    with tarfile.open(tmp_path / "minilm-tiny.tar.gz", "r:gz") as archive:
        assert MANIFEST_FILE in archive.getnames()


def test_a_spec_file_with_overrides(tiny_bert: Path, tmp_path: Path) -> None:
    # Given a run spec naming the model, converted with --precision int8 and an uncompressed pack
    spec = tmp_path / "run.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "cli-test",
                "model": {"source": str(tiny_bert), "max_sequence_length": 64},
                "pack": {"compression": "none"},
                "benchmark": {"sequence_lengths": ["natural", 64]},
            }
        )
    )
    out = tmp_path / "artifact"
    result = runner.invoke(app, ["convert", str(spec), "--out", str(out), "--precision", "int8", "--pack"])
    # Then the INT8 artifact passed its guard, and the tarball is a plain tar
    assert result.exit_code == 0, result.output
    assert read_manifest(out).onnx_file == "model.int8.onnx"
    assert "INT8 embeddings agree with fp32" in result.output
    with tarfile.open(tmp_path / "artifact.tar", "r:") as archive:
        assert "model.int8.onnx" in archive.getnames()


def test_bad_input_exits_2_naming_the_problem(tmp_path: Path) -> None:
    # Given a folder that is not a model
    (tmp_path / "empty").mkdir()
    out = tmp_path / "out"
    result = runner.invoke(app, ["convert", str(tmp_path / "empty"), "--out", str(out)])
    # Then the command fails with the error class, the problem and its fix, and writes nothing
    assert result.exit_code == 2
    assert "ModelSourceInvalid" in result.output and "has no config.json" in result.output
    assert not out.exists()


def test_fp16_is_refused_before_any_work(tmp_path: Path) -> None:
    result = runner.invoke(app, ["convert", "bundled", "--out", str(tmp_path / "o"), "--precision", "fp16"])
    assert result.exit_code == 2
    assert "fp16 is refused for CPU targets" in result.output
