"""Small broken inputs for the refusal corpus: model folders written by hand (no torch, no conversion).

A folder is a config.json, a safetensors file whose header is written here byte by byte, and the
bundled MiniLM's tokenizer files; each broken variant differs from a working one in one way.
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path
from typing import Any

from workflows.conversion.source import bundled_model_path

BERT_CONFIG: dict[str, Any] = {
    "architectures": ["BertModel"],
    "model_type": "bert",
    "hidden_size": 32,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "vocab_size": 30522,
}
XLM_ROBERTA_CONFIG: dict[str, Any] = {
    **BERT_CONFIG,
    "architectures": ["XLMRobertaModel"],
    "model_type": "xlm-roberta",
    "max_position_embeddings": 514,
    "type_vocab_size": 1,
}
DECODER_CONFIG: dict[str, Any] = {
    "architectures": ["GPT2LMHeadModel"],
    "model_type": "gpt2",
    "n_positions": 1024,
}
VISION_CONFIG: dict[str, Any] = {
    "architectures": ["ViTModel"],
    "model_type": "vit",
    "image_size": 224,
    "patch_size": 16,
    "num_channels": 3,
}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json")


def safetensors_bytes(values: int = 4) -> bytes:
    """A complete safetensors file with one float32 tensor of ``values`` elements."""
    header = json.dumps({"w": {"dtype": "F32", "shape": [values], "data_offsets": [0, 4 * values]}}).encode()
    return struct.pack("<Q", len(header)) + header + b"\0" * (4 * values)


def model_folder(
    root: Path,
    *,
    config: dict[str, Any] | None = None,
    weights: bytes | None = None,
    tokenizer: bool = True,
    tokenizer_config: dict[str, Any] | None = None,
) -> Path:
    """A model folder under ``root``: BERT's config and complete weights unless told otherwise."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps(BERT_CONFIG if config is None else config), encoding="utf-8")
    (root / "model.safetensors").write_bytes(safetensors_bytes() if weights is None else weights)
    if tokenizer:
        bundled = bundled_model_path()
        for name in TOKENIZER_FILES:
            shutil.copy2(bundled / name, root / name)
        if tokenizer_config is not None:
            (root / "tokenizer_config.json").write_text(json.dumps(tokenizer_config), encoding="utf-8")
    return root


def write_spec(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
