"""Parity gate: the ONNX graph must reproduce PyTorch on texts of mixed lengths, padding included."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workflows.benchmark.texts import natural_texts, validation_texts
from workflows.contracts import ParityReport

Item = str | tuple[str, str]
"""One input: a text, or a (text, text_pair) for classifiers."""

CHECK_BATCH = 8
"""Texts per batch in the checks: each batch is padded to its longest text, so padding is exercised."""


def validation_items(task: str) -> list[Item]:
    """The validation set: 64 texts from 1 to ~400 words, unsorted so that batches mix lengths.

    Half are long (3-400 words, truncated at the spec's maximum), half natural (median 18 words):
    INT8 errors are largest on the shortest inputs. Classifiers get pairs of three kinds (the
    text itself, half of it, an unrelated text) so that a classifier's predictions spread.
    """
    texts = [t for pair in zip(validation_texts(32), natural_texts(32, seed=4), strict=True) for t in pair]
    if task != "classification":
        return list(texts)
    items: list[Item] = []
    for i, text in enumerate(texts):
        words = text.split()
        second = (text, " ".join(words[: max(1, len(words) // 2)]), texts[(i + 7) % len(texts)])[i % 3]
        items.append((text, second))
    return items


def calibration_items(task: str, count: int = 32) -> list[Item]:
    """Texts for activation ranges, distinct from the validation set (which judges the result)."""
    texts = natural_texts(count, seed=97) + ["Yes.", "Hello world.", "No way!", "ok"]
    if task != "classification":
        return list(texts)
    return [(text, texts[(i + 3) % len(texts)]) for i, text in enumerate(texts)]


def encode(tokenizer: Any, items: list[Item], *, max_length: int, tensors: str = "np") -> Any:
    """Tokenize texts or pairs, padded to the longest and truncated at ``max_length``."""
    firsts = [item if isinstance(item, str) else item[0] for item in items]
    seconds = [item[1] for item in items if not isinstance(item, str)]
    return tokenizer(
        firsts,
        seconds or None,
        padding=True,
        truncation=True,
        max_length=max_length,
        return_tensors=tensors,
    )


def ort_session(path: Path, *, threads: int = 0) -> Any:
    """A CPU session; ``threads`` 0 uses every core (timings pass 1 for stable figures)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def feed_for(session: Any, encoded: Any) -> dict[str, np.ndarray]:
    """Only the inputs the graph declares (F03), as int64."""
    names = {i.name for i in session.get_inputs()}
    return {k: np.asarray(v).astype(np.int64) for k, v in encoded.items() if k in names}


def check_batches(tokenizer: Any, items: list[Item], *, max_length: int) -> list[dict[str, np.ndarray]]:
    """The validation set tokenized into padded batches of ``CHECK_BATCH``."""
    return [
        {
            k: np.asarray(v).astype(np.int64)
            for k, v in encode(tokenizer, chunk, max_length=max_length).items()
        }
        for chunk in (items[i : i + CHECK_BATCH] for i in range(0, len(items), CHECK_BATCH))
    ]


def run_onnx(path: Path, batches: list[dict[str, np.ndarray]]) -> np.ndarray:
    session = ort_session(path)
    names = {i.name for i in session.get_inputs()}
    return np.concatenate(
        [session.run(None, {k: v for k, v in batch.items() if k in names})[0] for batch in batches]
    )


def run_torch(graph: Any, batches: list[dict[str, np.ndarray]]) -> np.ndarray:
    import torch

    outputs = []
    with torch.no_grad():
        for batch in batches:
            outputs.append(graph(*(torch.from_numpy(batch[name]) for name in graph.input_names)).numpy())
    return np.concatenate(outputs)


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    na = np.linalg.norm(a, axis=1)
    nb = np.linalg.norm(b, axis=1)
    return np.asarray((a * b).sum(axis=1) / np.maximum(na * nb, 1e-12))


def compare(reference: np.ndarray, candidate: np.ndarray, *, tolerance: float) -> ParityReport:
    diff = float(np.abs(reference - candidate).max())
    cosine = float(cosines(reference, candidate).min())
    return ParityReport(
        texts=int(reference.shape[0]),
        max_abs_diff=diff,
        min_cosine=cosine,
        tolerance=tolerance,
        passed=diff <= tolerance,
    )


@dataclass
class ParityCheck:
    """The validation set, tokenized, and the fp32 reference on it."""

    batches: list[dict[str, np.ndarray]]
    torch_outputs: np.ndarray
    tolerance: float

    def __post_init__(self) -> None:
        self._seen: dict[Path, tuple[ParityReport, np.ndarray]] = {}

    def parity(self, path: Path) -> tuple[ParityReport, np.ndarray]:
        """The graph at ``path`` against PyTorch (computed once per graph)."""
        if path not in self._seen:
            outputs = run_onnx(path, self.batches)
            self._seen[path] = compare(self.torch_outputs, outputs, tolerance=self.tolerance), outputs
        return self._seen[path]

    def gate(self, path: Path) -> tuple[bool, str]:
        report, _ = self.parity(path)
        return report.passed, f"max |diff| {report.max_abs_diff:.2e}, tolerance {report.tolerance:.0e}"
