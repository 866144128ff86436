"""Small encoders with random weights, built locally from a config (no model hub needed).

Used by tests and benchmarks where the real weights do not matter but the architecture, the
tokenizer and the shapes do. The tokenizer is the bundled MiniLM's (BERT WordPiece).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from workflows.conversion.source import bundled_model_path

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


def build_tiny_bert(
    target: Path, *, task: str = "embedding", hidden: int = 32, layers: int = 2, seed: int = 0
) -> Path:
    """A BERT with random weights and MiniLM's tokenizer, saved as a Hugging Face folder."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel

    torch.manual_seed(seed)
    source = bundled_model_path()
    config = BertConfig(
        vocab_size=30522,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=max(1, hidden // 16),
        intermediate_size=hidden * 4,
        max_position_embeddings=512,
    )
    model: Any
    if task == "classification":
        config.num_labels = 3
        config.id2label = {0: "entailment", 1: "neutral", 2: "contradiction"}
        config.label2id = {v: k for k, v in config.id2label.items()}
        model = BertForSequenceClassification(config)
    else:
        model = BertModel(config)
    target.mkdir(parents=True, exist_ok=True)
    model.eval().save_pretrained(str(target))
    for name in TOKENIZER_FILES:
        if (source / name).exists():
            shutil.copy2(source / name, target / name)
    return target
