"""Encoders with random weights, built locally from a config (no model hub needed).

Used by tests and benchmarks where the real weights do not matter but the architecture, the
tokenizer and the shapes do. BERT borrows the bundled MiniLM's WordPiece tokenizer; XLM-R and
DeBERTa-v2 get a SentencePiece-style Unigram vocabulary trained here, offline and
deterministically, on the project's own texts (their real tokenizers are 250k-piece
SentencePiece models that we cannot download).

Random weights have no activation outliers, so their INT8 figures say nothing about a trained
model's; only the bundled MiniLM has real weights.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from workflows.conversion.random_parts import (
    TOKENIZER_FILES,
    _encoder_dims,
    _save,
    _with_labels,
    unigram_pieces,
)
from workflows.conversion.source import bundled_model_path

BASE_FAMILIES = ("bert", "xlm-roberta", "deberta-v2")


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


def build_random_xlm_roberta(
    target: Path,
    *,
    task: str = "embedding",
    hidden: int = 32,
    layers: int = 2,
    heads: int | None = None,
    seed: int = 0,
    head_std: float | None = None,
) -> Path:
    """An XLM-RoBERTa with random weights and a trained Unigram tokenizer."""
    import torch
    from transformers import (
        XLMRobertaConfig,
        XLMRobertaForSequenceClassification,
        XLMRobertaModel,
        XLMRobertaTokenizer,
    )

    torch.manual_seed(seed)
    vocab = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), *unigram_pieces(), ("<mask>", 0.0)]
    tokenizer = XLMRobertaTokenizer(vocab=vocab)
    # XLM-R's real config: one token type (always 0), positions offset by the padding id.
    config = XLMRobertaConfig(
        vocab_size=len(vocab),
        max_position_embeddings=514,
        type_vocab_size=1,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        **_encoder_dims(hidden, layers, heads),
    )
    _with_labels(config, task)
    model: Any = (
        XLMRobertaForSequenceClassification(config) if task == "classification" else XLMRobertaModel(config)
    )
    return _save(model, tokenizer, target, head_std)


def build_random_deberta_v2(
    target: Path,
    *,
    task: str = "embedding",
    hidden: int = 32,
    layers: int = 2,
    heads: int | None = None,
    seed: int = 0,
    head_std: float | None = None,
) -> Path:
    """A DeBERTa-v2 shaped like mDeBERTa-v3 (disentangled attention, no token types), random weights."""
    import torch
    from transformers import (
        DebertaV2Config,
        DebertaV2ForSequenceClassification,
        DebertaV2Model,
        DebertaV2Tokenizer,
    )

    torch.manual_seed(seed)
    vocab = [
        ("[PAD]", 0.0),
        ("[CLS]", 0.0),
        ("[SEP]", 0.0),
        ("[UNK]", 0.0),
        *unigram_pieces(),
        ("[MASK]", 0.0),
    ]
    tokenizer = DebertaV2Tokenizer(vocab=vocab, unk_id=3)
    # mdeberta-v3-base's structure at a smaller size: type_vocab_size 0 means the tokenizer's
    # token_type_ids have no embedding to feed (F03).
    settings: dict[str, Any] = {
        "vocab_size": len(vocab),
        "max_position_embeddings": 512,
        "type_vocab_size": 0,
        "relative_attention": True,
        "position_buckets": 256,
        "max_relative_positions": -1,
        "pos_att_type": ["p2c", "c2p"],
        "position_biased_input": False,
        "norm_rel_ebd": "layer_norm",
        "share_att_key": True,
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-7,
        "pad_token_id": 0,
        **_encoder_dims(hidden, layers, heads),
    }
    config = DebertaV2Config(**settings)
    _with_labels(config, task)
    model: Any = (
        DebertaV2ForSequenceClassification(config) if task == "classification" else DebertaV2Model(config)
    )
    return _save(model, tokenizer, target, head_std)


def _all_families() -> tuple[str, ...]:
    from workflows.conversion.random_families import RECIPES

    return (*BASE_FAMILIES, *RECIPES)


def build_random_model(
    family: str, target: Path, *, task: str = "embedding", hidden: int = 32, layers: int = 2, **kwargs: Any
) -> Path:
    """Dispatch on ``family`` (one of ``FAMILIES``): ``deberta-v2`` is shaped like mDeBERTa-v3,
    ``deberta-v2-conv`` like deberta-v2-xlarge."""
    from workflows.conversion.random_families import build_from_recipe

    builders = {
        "bert": build_tiny_bert,
        "xlm-roberta": build_random_xlm_roberta,
        "deberta-v2": build_random_deberta_v2,
    }
    if family in builders:
        return builders[family](target, task=task, hidden=hidden, layers=layers, **kwargs)
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; choose one of {', '.join(FAMILIES)}")
    return build_from_recipe(family, target, task=task, hidden=hidden, layers=layers, **kwargs)


FAMILIES = _all_families()
