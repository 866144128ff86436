"""Bad input to the convert step: a clear error naming the problem, and no artifact left behind."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import fast_spec
from workflows.contracts import StepRequest
from workflows.conversion.build import build_artifact
from workflows.conversion.source import check_safetensors, check_weights
from workflows.errors import DeploybenchError, ModelSourceInvalid, OutputNotWritable, UnsupportedArchitecture


def model_copy(tiny_bert: Path, tmp_path: Path) -> Path:
    target = tmp_path / "model"
    shutil.copytree(tiny_bert, target)
    return target


def convert(source: Path, out: Path, scratch: Path | None = None) -> None:
    request = StepRequest(run_id="bad-input", spec=fast_spec(source, convert={"optimize": "none"}))
    build_artifact(request, source=source, out=out, scratch=scratch or out.parent / "scratch")


def nothing_left(out: Path) -> bool:
    """Neither the artifact nor a staging folder that could pass for it."""
    return not out.exists() and not list(out.parent.glob(f".{out.name}.partial-*"))


def test_not_a_model_folder(tmp_path: Path) -> None:
    # Given a folder of unrelated files
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "cat.jpg").write_bytes(b"\xff\xd8")
    out = tmp_path / "out" / "artifact"
    # Then converting it names what is missing
    with pytest.raises(
        ModelSourceInvalid, match=r"has no config.json, so it is not a Hugging Face model folder"
    ):
        convert(folder, out)
    assert nothing_left(out)


def test_unknown_architecture(tiny_bert: Path, tmp_path: Path) -> None:
    # Given a model folder whose config names a decoder
    source = model_copy(tiny_bert, tmp_path)
    config = json.loads((source / "config.json").read_text())
    (source / "config.json").write_text(
        json.dumps({**config, "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]})
    )
    out = tmp_path / "artifact"
    # Then the error names the architecture and the supported types
    with pytest.raises(
        UnsupportedArchitecture, match=r"GPT2LMHeadModel \(model_type 'gpt2'\) has no export route"
    ) as caught:
        convert(source, out)
    assert "deberta-v2" in str(caught.value) and "xlm-roberta" in str(caught.value)
    assert nothing_left(out)


def test_missing_tokenizer(tiny_bert: Path, tmp_path: Path) -> None:
    source = model_copy(tiny_bert, tmp_path)
    for name in ("tokenizer.json", "vocab.txt"):
        (source / name).unlink()
    out = tmp_path / "artifact"
    with pytest.raises(ModelSourceInvalid, match=r"has no tokenizer files .* Fix: save the tokenizer"):
        convert(source, out)
    assert nothing_left(out)


def test_truncated_weight_file(tiny_bert: Path, tmp_path: Path) -> None:
    # Given weights cut short, as an interrupted download leaves them (F22)
    source = model_copy(tiny_bert, tmp_path)
    weights = source / "model.safetensors"
    full = weights.stat().st_size
    weights.write_bytes(weights.read_bytes()[: full // 2])
    out = tmp_path / "artifact"
    # Then the error names the file and how many bytes its header declares
    with pytest.raises(
        ModelSourceInvalid,
        match=rf"model.safetensors is truncated or corrupt \({full // 2} bytes, its header declares {full}\)",
    ):
        convert(source, out)
    assert nothing_left(out)


@pytest.mark.parametrize("content", [b"", b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}12345"])
def test_weights_that_are_not_safetensors(tmp_path: Path, content: bytes) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(content)
    with pytest.raises(ModelSourceInvalid, match="truncated or corrupt"):
        check_safetensors(weights)


def test_a_shard_named_by_the_index_is_missing(tiny_bert: Path, tmp_path: Path) -> None:
    source = model_copy(tiny_bert, tmp_path)
    (source / "model.safetensors").rename(source / "model-00001-of-00002.safetensors")
    index = {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}
    (source / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(
        ModelSourceInvalid, match=r"lacks weight shards \['model-00002-of-00002.safetensors'\]"
    ):
        check_weights(source)


def test_a_truncated_pytorch_bin_is_refused(tmp_path: Path) -> None:
    import torch

    torch.save({"w": torch.zeros(1000)}, tmp_path / "pytorch_model.bin")
    data = (tmp_path / "pytorch_model.bin").read_bytes()
    (tmp_path / "pytorch_model.bin").write_bytes(data[: len(data) - 200])
    with pytest.raises(ModelSourceInvalid, match="pytorch_model.bin is truncated or corrupt"):
        check_weights(tmp_path)


def test_unwritable_output(tiny_bert: Path, tmp_path: Path) -> None:
    # Given an output folder whose parent is a file
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    out = blocker / "artifact"
    # Then the error names the path before any work is done
    with pytest.raises(OutputNotWritable, match=r"cannot write .*not-a-folder/artifact"):
        convert(tiny_bert, out, tmp_path / "scratch")


def test_output_folder_already_holding_files(tiny_bert: Path, tmp_path: Path) -> None:
    out = tmp_path / "artifact"
    out.mkdir()
    (out / "old.txt").write_text("keep me")
    with pytest.raises(OutputNotWritable, match="already exists and is not an empty folder"):
        convert(tiny_bert, out)
    assert (out / "old.txt").read_text() == "keep me"


def test_every_bad_input_error_is_terminal_with_a_fix() -> None:
    for error in (ModelSourceInvalid, UnsupportedArchitecture, OutputNotWritable):
        assert issubclass(error, DeploybenchError) and not error.retryable
