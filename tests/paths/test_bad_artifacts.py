"""The refusal corpus's artifacts: a converted artifact with one file broken, blocked by the CLI's preflight
before any spend (the specs and models: test_bad_inputs.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.paths.test_bad_inputs import BLOCKED, Case, assert_refused_well, refuse
from tests.support import bad_inputs as bad

ARTIFACTS = [
    Case(
        "truncated-onnx",
        "model.onnx",
        ("F22", "model.onnx"),
        lambda root: _truncate(root / "model.onnx"),
    ),
    Case(
        "config-pbtxt-unparsable",
        "a Triton model repository",
        ("F19", "does not parse as inference.ModelConfig", "commas between list elements"),
        lambda root: _repository(root),
    ),
    Case(
        "conflicting-transformers",
        "code/requirements.txt",
        ("F28", "transformers==4.30.0", "does not satisfy"),
        lambda root: _append(root / "code" / "requirements.txt", "transformers==4.30.0\n"),
    ),
]


def _repository(artifact: Path) -> Path:
    """The artifact turned into a Triton repository whose config lists dims without commas."""
    model = artifact / "encoder"
    (model / "1").mkdir(parents=True)
    shutil.move(str(artifact / "model.onnx"), model / "1" / "model.onnx")
    (model / "config.pbtxt").write_text(
        'name: "encoder"\nbackend: "onnxruntime"\ninput [\n  { name: "input_ids" data_type: TYPE_INT64 dims: [ -1 ] }\n'
        '  { name: "attention_mask" data_type: TYPE_INT64 dims: [ -1 ] }\n]\n',
        encoding="utf-8",
    )
    return artifact


def _truncate(path: Path) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def _append(path: Path, line: str) -> Path:
    path.write_text(path.read_text(encoding="utf-8") + line, encoding="utf-8")
    return path


@pytest.mark.parametrize("case", ARTIFACTS, ids=lambda c: c.id)
def test_a_broken_artifact_is_blocked_by_the_preflight(
    case: Case, tiny_artifact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a converted artifact with one file broken
    artifact = tmp_path / "artifact"
    shutil.copytree(tiny_artifact, artifact)
    assert case.model is not None
    case.model(artifact)
    spec = bad.write_spec(tmp_path / "spec.yaml", "name: x\n")
    # When the preflight checks it
    code, text, seconds = refuse(["preflight", str(spec), "--artifact", str(artifact), "--json"], capsys)
    # Then the finding blocks and names the file
    assert_refused_well(code, text, seconds, BLOCKED, case.says)
    blocking = [f for f in json.loads(text)["findings"] if f["severity"] == "blocking"]
    assert case.says[0] in {f["id"] for f in blocking}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["artifact", "spec.yaml"]
