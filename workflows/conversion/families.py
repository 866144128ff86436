"""Which encoder architectures convert, and which offline fusion rules each gets.

Measured on transformers 5.23 / onnxruntime 1.31: a TorchScript export with eager attention fuses
fully under ``onnxruntime.transformers`` ``model_type="bert"`` for BERT and XLM-R (Attention,
SkipLayerNorm, BiasGelu; EmbedLayerNorm for BERT only, RoBERTa's position ids do not match it).
DeBERTa-v2's disentangled attention matches no rule: the BERT pass only adds what onnxruntime
fuses at session load anyway (SkipLayerNorm, BiasGelu), and it needs 7-9x the model size in
memory (8 GB for mDeBERTa-base, which crashed under an 8 GiB cap; F34). So DeBERTa gets no
offline pass at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workflows.conversion.source import ModelFolder
from workflows.errors import UnsupportedArchitecture


@dataclass(frozen=True)
class Family:
    """How one ``config.model_type`` converts."""

    name: str
    fusion: str | None
    """``model_type`` for ``onnxruntime.transformers.optimizer``, or None for no offline pass."""
    why_no_fusion: str = ""
    position_offset: int = 0
    """Position ids the family reserves: RoBERTa-style models count positions from padding_idx + 1 = 2,
    so a 514-position table holds 512 tokens."""


_BERT_RULES = "bert"
FAMILIES: dict[str, Family] = {
    "bert": Family("BERT", _BERT_RULES),
    "roberta": Family("RoBERTa", _BERT_RULES, position_offset=2),
    "xlm-roberta": Family("XLM-RoBERTa", _BERT_RULES, position_offset=2),
    "distilbert": Family("DistilBERT", _BERT_RULES),
    "mpnet": Family(
        "MPNet", None, "its relative position bias matches no onnxruntime fusion rule", position_offset=2
    ),
    "electra": Family("ELECTRA", _BERT_RULES),
    "camembert": Family("CamemBERT", _BERT_RULES, position_offset=2),
    "albert": Family(
        "ALBERT",
        None,
        "its one layer shared by every depth and factorised embeddings are not measured under fusion",
    ),
    "modernbert": Family(
        "ModernBERT",
        None,
        "rotary positions, GeGLU and alternating local attention match no onnxruntime fusion rule",
    ),
    "deberta-v2": Family(
        "DeBERTa-v2",
        None,
        "disentangled attention matches no fusion rule; onnxruntime fuses SkipLayerNorm and BiasGelu at "
        "session load, which is all an offline BERT pass would add (F34)",
    ),
}


def family_of(folder: ModelFolder) -> Family:
    """The conversion family of a model folder.

    Raises:
        UnsupportedArchitecture: naming the architecture and the supported model types.
    """
    family = FAMILIES.get(folder.model_type)
    if family is None:
        raise UnsupportedArchitecture(
            f"architecture {folder.architecture} (model_type '{folder.model_type}') has no export route.",
            fix=f"use an encoder whose config.json model_type is one of {', '.join(sorted(FAMILIES))}",
        )
    return family


def takes_token_type_ids(config: Any) -> bool:
    """Whether the graph should take token_type_ids.

    Only a model with more than one segment embedding uses them: BERT has 2 (sentence pairs);
    XLM-R has 1 (always 0); DeBERTa-v2/mDeBERTa has 0 although its tokenizer still emits them (F03).
    """
    return int(getattr(config, "type_vocab_size", 0) or 0) > 1
