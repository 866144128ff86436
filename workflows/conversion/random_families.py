"""More random-weight encoders: every family users commonly bring, each with the tokenizer of its kind.

Each family is built from a small config of its real layout and a tokenizer trained here, offline and
deterministically, then saved by the installed transformers (as a fine-tuned model's tokenizer is):
WordPiece families (DistilBERT, ELECTRA, MPNet) take MiniLM's vocabulary, byte-level BPE
families (RoBERTa, ModernBERT) a BPE trained on the project's texts, SentencePiece families (XLM-R,
DeBERTa-v2, ALBERT, CamemBERT) the Unigram pieces of :func:`random_parts.unigram_pieces`. BERT
alone is built elsewhere (:func:`random_models.build_tiny_bert`: MiniLM's tokenizer files, copied).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from workflows.benchmark.texts import natural_texts, validation_texts
from workflows.conversion.source import bundled_model_path


@lru_cache(maxsize=2)
def wordpiece_vocab() -> tuple[str, ...]:
    """MiniLM's WordPiece vocabulary (30522 entries), in id order."""
    lines = (bundled_model_path() / "vocab.txt").read_text(encoding="utf-8").splitlines()
    return tuple(lines)


@lru_cache(maxsize=2)
def byte_level_bpe(vocab_size: int = 3000) -> tuple[dict[str, int], tuple[str, ...]]:
    """A byte-level BPE (vocabulary and merges) trained on deterministic texts, specials first."""
    from tokenizers import ByteLevelBPETokenizer

    trainer = ByteLevelBPETokenizer()
    trainer.train_from_iterator(
        natural_texts(3000, seed=12) + validation_texts(64),
        vocab_size=vocab_size,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        show_progress=False,
    )
    data = json.loads(trainer.to_str())["model"]
    merges = tuple(m if isinstance(m, str) else " ".join(m) for m in data["merges"])
    return dict(data["vocab"]), merges


def _wordpiece(cls_name: str, extra: tuple[str, ...] = ()) -> Any:
    import transformers

    vocab = {token: index for index, token in enumerate(wordpiece_vocab())}
    for token in extra:
        vocab.setdefault(token, len(vocab))
    return getattr(transformers, cls_name)(vocab=vocab)


def _unigram(cls_name: str, specials: tuple[str, ...], mask: str, **kwargs: Any) -> Any:
    import transformers

    from workflows.conversion.random_parts import unigram_pieces

    vocab = [*((s, 0.0) for s in specials), *unigram_pieces(), (mask, 0.0)]
    return getattr(transformers, cls_name)(vocab=vocab, **kwargs)


def _roberta_tokenizer() -> Any:
    from transformers import RobertaTokenizer

    vocab, merges = byte_level_bpe()
    pairs: Any = [tuple(m.split(" ")) for m in merges]  # the backend wants pairs, whatever the hint says
    return RobertaTokenizer(vocab=dict(vocab), merges=pairs)


def _modernbert_tokenizer() -> Any:
    """ModernBERT ships a plain ``PreTrainedTokenizerFast`` (byte-level BPE, BERT-style specials)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab, merges = byte_level_bpe()
    specials = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    vocab = dict(vocab)
    for token in specials:
        vocab.setdefault(token, len(vocab))
    pairs: Any = [tuple(m.split(" ")) for m in merges]
    backend = Tokenizer(models.BPE(vocab=vocab, merges=pairs))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    cls_id, sep_id = vocab["[CLS]"], vocab["[SEP]"]
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        mask_token="[MASK]",
        model_input_names=["input_ids", "attention_mask"],
    )


@dataclass(frozen=True)
class Recipe:
    """How one family is built: transformers class names, its tokenizer and its config's shape."""

    config: str
    model: str
    classifier: str
    tokenizer: Any
    """A callable returning the family's tokenizer (built fresh each time)."""
    settings: dict[str, Any] = field(default_factory=dict)
    """Config keys beyond the common dimensions; the tokenizer's ``len`` fills ``vocab_size``."""


_DEBERTA_V3 = {
    # mdeberta-v3-base's structure (the deberta-v2 recipe below: model_type deberta-v2 covers v2
    # and v3) at a smaller size; v2-xlarge adds the convolution below. type_vocab_size 0 means the
    # tokenizer's token_type_ids have no embedding to feed (F03).
    "max_position_embeddings": 512,
    "type_vocab_size": 0,
    "relative_attention": True,
    "position_buckets": 256,
    "max_relative_positions": -1,
    "pos_att_type": ["p2c", "c2p"],
    "position_biased_input": False,
    "norm_rel_ebd": "layer_norm",
    "share_att_key": True,
    "layer_norm_eps": 1e-7,
    "pad_token_id": 0,
}


def _deberta_tokenizer() -> Any:
    return _unigram("DebertaV2Tokenizer", ("[PAD]", "[CLS]", "[SEP]", "[UNK]"), "[MASK]", unk_id=3)


RECIPES: dict[str, Recipe] = {
    "xlm-roberta": Recipe(
        # XLM-R's real config: one token type (always 0), positions offset by the padding id.
        "XLMRobertaConfig",
        "XLMRobertaModel",
        "XLMRobertaForSequenceClassification",
        lambda: _unigram("XLMRobertaTokenizer", ("<s>", "<pad>", "</s>", "<unk>"), "<mask>"),
        {
            "max_position_embeddings": 514,
            "type_vocab_size": 1,
            "pad_token_id": 1,
            "bos_token_id": 0,
            "eos_token_id": 2,
        },
    ),
    "deberta-v2": Recipe(
        "DebertaV2Config",
        "DebertaV2Model",
        "DebertaV2ForSequenceClassification",
        _deberta_tokenizer,
        {**_DEBERTA_V3, "hidden_act": "gelu"},
    ),
    "roberta": Recipe(
        "RobertaConfig",
        "RobertaModel",
        "RobertaForSequenceClassification",
        _roberta_tokenizer,
        {
            "max_position_embeddings": 514,
            "type_vocab_size": 1,
            "pad_token_id": 1,
            "bos_token_id": 0,
            "eos_token_id": 2,
        },
    ),
    "distilbert": Recipe(
        "DistilBertConfig",
        "DistilBertModel",
        "DistilBertForSequenceClassification",
        lambda: _wordpiece("DistilBertTokenizer"),
        {"max_position_embeddings": 512},
    ),
    "mpnet": Recipe(
        "MPNetConfig",
        "MPNetModel",
        "MPNetForSequenceClassification",
        lambda: _wordpiece("MPNetTokenizer", ("<s>", "</s>", "<pad>", "<mask>")),
        {"max_position_embeddings": 514, "pad_token_id": 1, "relative_attention_num_buckets": 32},
    ),
    "electra": Recipe(
        "ElectraConfig",
        "ElectraModel",
        "ElectraForSequenceClassification",
        lambda: _wordpiece("ElectraTokenizer"),
        {"max_position_embeddings": 512, "type_vocab_size": 2},
    ),
    "albert": Recipe(
        "AlbertConfig",
        "AlbertModel",
        "AlbertForSequenceClassification",
        lambda: _unigram("AlbertTokenizer", ("<pad>", "<unk>", "[CLS]", "[SEP]"), "[MASK]"),
        {"max_position_embeddings": 512, "type_vocab_size": 2, "pad_token_id": 0},
    ),
    "camembert": Recipe(
        "CamembertConfig",
        "CamembertModel",
        "CamembertForSequenceClassification",
        lambda: _unigram("CamembertTokenizer", ("<s>", "<pad>", "</s>", "<unk>"), "<mask>"),
        {
            "max_position_embeddings": 514,
            "type_vocab_size": 1,
            "pad_token_id": 1,
            "bos_token_id": 0,
            "eos_token_id": 2,
        },
    ),
    "modernbert": Recipe(
        "ModernBertConfig",
        "ModernBertModel",
        "ModernBertForSequenceClassification",
        _modernbert_tokenizer,
        {"max_position_embeddings": 512, "local_attention": 16, "global_attn_every_n_layers": 2},
    ),
    "deberta-v2-conv": Recipe(
        # deberta-v2-xlarge's structure: v3's attention plus the convolution beside the first layer.
        "DebertaV2Config",
        "DebertaV2Model",
        "DebertaV2ForSequenceClassification",
        _deberta_tokenizer,
        {**_DEBERTA_V3, "conv_kernel_size": 3, "conv_act": "gelu"},
    ),
}


def build_from_recipe(
    family: str,
    target: Path,
    *,
    task: str = "embedding",
    hidden: int = 32,
    layers: int = 2,
    heads: int | None = None,
    seed: int = 0,
    head_std: float | None = None,
) -> Path:
    """Build ``family`` (a key of ``RECIPES``) with random weights and save it, tokenizer included."""
    import torch
    import transformers

    from workflows.conversion.random_parts import _encoder_dims, _save, _with_labels

    recipe = RECIPES[family]
    torch.manual_seed(seed)
    tokenizer = recipe.tokenizer()
    dims = _encoder_dims(hidden, layers, heads)
    if family == "distilbert":
        # DistilBERT names its dimensions differently.
        dims = {
            "dim": dims["hidden_size"],
            "n_layers": dims["num_hidden_layers"],
            "n_heads": dims["num_attention_heads"],
            "hidden_dim": dims["intermediate_size"],
        }
    if family == "albert":
        dims["embedding_size"] = max(16, hidden // 2)
    if family == "modernbert":
        # Its config's default special ids are those of its 50k vocabulary.
        ids = ("pad", "cls", "sep")
        dims.update({f"{name}_token_id": getattr(tokenizer, f"{name}_token_id") for name in ids})
        dims.update(bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id)
    config = getattr(transformers, recipe.config)(vocab_size=len(tokenizer), **recipe.settings, **dims)
    _with_labels(config, task)
    model_class = recipe.classifier if task == "classification" else recipe.model
    model = getattr(transformers, model_class)(config)
    return _save(model, tokenizer, target, head_std)
