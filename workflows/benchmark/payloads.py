"""Request bodies for a shape (batch size, sequence length)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from workflows.benchmark.texts import long_texts, natural_texts

SequenceLength = int | Literal["natural"]

# Distinct bodies per shape, cycled: enough that a server-side cache of one body cannot flatter the
# figures, few enough to build in milliseconds.
PAYLOAD_VARIANTS = 16


@dataclass(frozen=True)
class Shape:
    batch_size: int
    sequence_length: SequenceLength

    @property
    def label(self) -> str:
        return f"b{self.batch_size}/{'natural' if self.sequence_length == 'natural' else f's{self.sequence_length}'}"


def shapes_of(batch_sizes: list[int], sequence_lengths: list[SequenceLength]) -> list[Shape]:
    """Every (batch, sequence) pair, sequence length outermost."""
    return [Shape(b, s) for s in sequence_lengths for b in batch_sizes]


def payload(shape: Shape, *, seed: int, variant: int = 0) -> bytes:
    """One request for ``shape``.

    ``parameters.batch_size`` is always sent: without it the HF pipeline runs a list one text at a
    time (510 ms vs 25 ms at batch 32, F31). A fixed sequence length pads every text to it, since
    short natural samples hide the cost of long inputs (F32).
    """
    texts_seed = seed * 1_000_003 + variant
    parameters: dict[str, object] = {"batch_size": shape.batch_size}
    if shape.sequence_length == "natural":
        texts = natural_texts(shape.batch_size, seed=texts_seed)
    else:
        # Enough words to exceed the target length; the server truncates and pads to it.
        texts = long_texts(shape.batch_size, seed=texts_seed, words=shape.sequence_length)
        parameters.update(padding="max_length", max_length=shape.sequence_length)
    return json.dumps({"inputs": texts, "parameters": parameters}).encode("utf-8")


def bodies_for(shape: Shape, seed: int) -> list[bytes]:
    """The ``PAYLOAD_VARIANTS`` bodies of a shape, deterministic for a seed."""
    return [payload(shape, seed=seed, variant=v) for v in range(PAYLOAD_VARIANTS)]
