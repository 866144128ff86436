"""What every random-weight model builder shares: the trained tokenizer pieces, encoder sizes, the
NLI labels, and how a model and its tokenizer are saved (random_models and random_families both use it)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from workflows.benchmark.texts import natural_texts, validation_texts

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")
NLI_LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}

# A few non-English lines so that accented letters are pieces, not <unk>.
_MULTILINGUAL = (
    "Das Wetter in Berlin ist heute sonnig und warm.",
    "La réunion est reportée à jeudi prochain à cause de la grève.",
    "El modelo fue entrenado con datos de varios idiomas, ¿verdad?",
    "Il ristorante era pieno, quindi abbiamo aspettato quasi un'ora.",
    "Der Zug nach Zürich fährt um 08:15 von Gleis 7 ab.",
)


@lru_cache(maxsize=4)
def unigram_pieces(vocab_size: int = 4000) -> tuple[tuple[str, float], ...]:
    """SentencePiece Unigram pieces with their log-probabilities, trained on deterministic texts."""
    from tokenizers import SentencePieceUnigramTokenizer

    corpus = natural_texts(3000, seed=11) + validation_texts(64) + list(_MULTILINGUAL) * 20
    trainer = SentencePieceUnigramTokenizer()
    trainer.train_from_iterator(
        corpus, vocab_size=vocab_size, special_tokens=["<unk>"], unk_token="<unk>", show_progress=False
    )
    pieces = json.loads(trainer.to_str())["model"]["vocab"]
    return tuple((str(piece), float(score)) for piece, score in pieces if piece != "<unk>")


def _encoder_dims(hidden: int, layers: int, heads: int | None) -> dict[str, Any]:
    return {
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads or max(1, hidden // 32),
        "intermediate_size": hidden * 4,
    }


def _scale_head(model: Any, head_std: float | None) -> None:
    """Re-draw the classification head's weights with ``head_std``.

    At the default 0.02 a random head gives every input nearly the same logits (top-2 margins of
    1e-3), so INT8 noise alone flips labels; a head drawn wider has margins of a few logits, as a
    trained one does, and the INT8 guard can be exercised on it.
    """
    import torch

    if head_std is None:
        return
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear) and ("classifier" in name or "pooler" in name):
            torch.nn.init.normal_(module.weight, std=head_std)


def _save(model: Any, tokenizer: Any, target: Path, head_std: float | None = None) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    _scale_head(model, head_std)
    model.eval().save_pretrained(str(target))
    if tokenizer is not None:
        tokenizer.save_pretrained(str(target))
    return target


def _with_labels(config: Any, task: str) -> None:
    if task == "classification":
        config.num_labels = len(NLI_LABELS)
        config.id2label = dict(NLI_LABELS)
        config.label2id = {v: k for k, v in NLI_LABELS.items()}
