"""Deterministic, realistic-looking texts for validation and benchmark payloads.

Field measurements were made on short natural texts (a 59-token sample) and on texts padded to
the target length (F32); both need texts whose token counts vary like real ones. A seed fixes
them, so two runs send the same requests.
"""

from __future__ import annotations

import numpy as np

_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "was",
    "for",
    "that",
    "on",
    "with",
    "as",
    "by",
    "at",
    "from",
    "this",
    "be",
    "are",
    "it",
    "an",
    "or",
    "which",
    "have",
    "not",
    "has",
    "but",
    "had",
    "were",
    "their",
    "its",
    "they",
    "one",
    "all",
    "been",
    "more",
    "also",
    "new",
    "would",
    "other",
    "after",
    "first",
    "into",
    "two",
    "time",
    "some",
    "when",
    "there",
    "can",
    "most",
    "only",
    "over",
    "such",
    "than",
    "them",
    "these",
    "many",
    "may",
    "people",
    "between",
    "year",
    "during",
    "under",
    "then",
    "both",
    "where",
    "while",
    "city",
    "state",
    "world",
    "service",
    "system",
    "data",
    "model",
    "customer",
    "order",
    "delivery",
    "price",
    "quality",
    "support",
    "team",
    "product",
    "account",
    "report",
    "update",
    "issue",
    "review",
    "market",
    "season",
    "weather",
    "river",
    "mountain",
    "village",
    "station",
    "library",
    "museum",
    "hospital",
    "school",
    "university",
    "company",
    "engine",
    "network",
    "server",
    "request",
    "response",
    "latency",
    "memory",
    "instance",
    "endpoint",
    "container",
    "cluster",
    "quickly",
    "slowly",
    "carefully",
    "recently",
    "often",
    "never",
    "always",
    "sometimes",
    "clearly",
    "nearly",
    "exactly",
    "small",
    "large",
    "early",
    "late",
    "happy",
    "busy",
    "quiet",
    "bright",
    "heavy",
    "simple",
    "complex",
    "modern",
    "ancient",
    "local",
    "global",
    "public",
    "private",
    "final",
    "initial",
    "available",
    "different",
    "important",
    "popular",
    "several",
    "arrived",
    "announced",
    "described",
    "reported",
    "released",
    "improved",
    "reduced",
    "increased",
    "opened",
    "closed",
    "visited",
    "expected",
    "received",
    "provided",
    "developed",
    "designed",
    "measured",
    "compared",
    "deployed",
    "trained",
    "because",
    "although",
    "however",
    "therefore",
    "meanwhile",
    "instead",
    "otherwise",
    "perhaps",
    "indeed",
]

_TOPICS = (
    "The delivery arrived two days late and the box was damaged.",
    "Our team measured the latency of the new endpoint under load.",
    "A quiet village near the river hosts a small museum.",
    "The quarterly report describes an increase in customer support requests.",
    "Please update the account settings before the next review.",
    "The weather station reported heavy rain in the mountain region.",
)


def sentence(rng: np.random.Generator, words: int) -> str:
    """One sentence of ``words`` words drawn from a fixed vocabulary."""
    picked = rng.choice(len(_WORDS), size=max(1, words))
    text = " ".join(_WORDS[i] for i in picked)
    return text[0].upper() + text[1:] + "."


def natural_texts(count: int, *, seed: int, median_words: int = 18, max_words: int = 120) -> list[str]:
    """``count`` texts with a long-tailed length distribution (median ~``median_words``)."""
    rng = np.random.default_rng(seed)
    lengths = np.clip(rng.lognormal(mean=np.log(median_words), sigma=0.6, size=count), 2, max_words)
    return [sentence(rng, int(n)) for n in lengths]


def long_texts(count: int, *, seed: int, words: int) -> list[str]:
    """Texts long enough to fill ``words`` words; used with padding/truncation to a fixed length."""
    rng = np.random.default_rng(seed)
    return [sentence(rng, words) for _ in range(count)]


def validation_texts(count: int = 32, *, seed: int = 20261129) -> list[str]:
    """Mixed lengths, from one word to past typical truncation, for parity checks."""
    rng = np.random.default_rng(seed)
    fixed = ["ok", "Hello world.", *_TOPICS]
    lengths = rng.integers(3, 400, size=max(0, count - len(fixed)))
    return (fixed + [sentence(rng, int(n)) for n in lengths])[:count]
