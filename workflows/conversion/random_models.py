"""Encoders with random weights, built locally from a config (no model hub needed).

Used by tests and benchmarks where the real weights do not matter but the architecture, the
tokenizer and the shapes do. BERT borrows the bundled MiniLM's WordPiece tokenizer; every other
family is a recipe of :mod:`random_families` (XLM-R and DeBERTa-v2 get a SentencePiece-style
Unigram vocabulary trained here, offline and deterministically, on the project's own texts: their
real tokenizers are 250k-piece SentencePiece models that we cannot download).

Random weights have no activation outliers, so their INT8 figures say nothing about a trained
model's; only the bundled MiniLM has real weights.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from workflows.conversion.random_families import RECIPES, build_from_recipe
from workflows.conversion.random_parts import TOKENIZER_FILES, _encoder_dims, _save, _with_labels
from workflows.conversion.source import bundled_model_path


def build_tiny_bert(
    target: Path,
    *,
    task: str = "embedding",
    hidden: int = 32,
    layers: int = 2,
    heads: int | None = None,
    seed: int = 0,
    head_std: float | None = None,
) -> Path:
    """A BERT with random weights and MiniLM's tokenizer, saved as a Hugging Face folder."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel

    torch.manual_seed(seed)
    source = bundled_model_path()
    config = BertConfig(
        vocab_size=30522, max_position_embeddings=512, **_encoder_dims(hidden, layers, heads or hidden // 16)
    )
    _with_labels(config, task)
    model: Any = BertForSequenceClassification(config) if task == "classification" else BertModel(config)
    _save(model, None, target, head_std)
    for name in TOKENIZER_FILES:
        if (source / name).exists():
            shutil.copy2(source / name, target / name)
    return target


def build_random_model(
    family: str, target: Path, *, task: str = "embedding", hidden: int = 32, layers: int = 2, **kwargs: Any
) -> Path:
    """Dispatch on ``family`` (one of ``FAMILIES``): ``deberta-v2`` is shaped like mDeBERTa-v3,
    ``deberta-v2-conv`` like deberta-v2-xlarge."""
    if family == "bert":
        return build_tiny_bert(target, task=task, hidden=hidden, layers=layers, **kwargs)
    if family not in RECIPES:
        raise ValueError(f"unknown family {family!r}; choose one of {', '.join(FAMILIES)}")
    return build_from_recipe(family, target, task=task, hidden=hidden, layers=layers, **kwargs)


FAMILIES = ("bert", *RECIPES)
