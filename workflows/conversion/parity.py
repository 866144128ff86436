"""Parity gate: the ONNX graph must reproduce PyTorch on texts of mixed lengths, padding included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from workflows.contracts import ParityReport


def ort_session(path: Path, *, threads: int = 1) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    na = np.linalg.norm(a, axis=1)
    nb = np.linalg.norm(b, axis=1)
    return (a * b).sum(axis=1) / np.maximum(na * nb, 1e-12)


def run_onnx(
    session: Any, tokenizer: Any, texts: list[str], *, max_length: int, batch: int = 8
) -> np.ndarray:
    names = {i.name for i in session.get_inputs()}
    outputs = []
    for start in range(0, len(texts), batch):
        enc = tokenizer(
            texts[start : start + batch],
            padding=True,
            truncation=True,
            max_length=max_length,
            return_tensors="np",
        )
        feed = {k: v.astype(np.int64) for k, v in enc.items() if k in names}
        outputs.append(session.run(None, feed)[0])
    return np.concatenate(outputs)


def run_torch(
    graph: Any, tokenizer: Any, input_names: list[str], texts: list[str], *, max_length: int, batch: int = 8
) -> np.ndarray:
    import torch

    outputs = []
    with torch.no_grad():
        for start in range(0, len(texts), batch):
            enc = tokenizer(
                texts[start : start + batch],
                padding=True,
                truncation=True,
                max_length=max_length,
                return_tensors="pt",
            )
            outputs.append(graph(*(enc[name] for name in input_names)).numpy())
    return np.concatenate(outputs)


def compare(reference: np.ndarray, candidate: np.ndarray, *, tolerance: float) -> ParityReport:
    diff = float(np.abs(reference - candidate).max())
    cosine = float(_cosines(reference, candidate).min())
    return ParityReport(
        texts=int(reference.shape[0]),
        max_abs_diff=diff,
        min_cosine=cosine,
        tolerance=tolerance,
        passed=diff <= tolerance,
    )
