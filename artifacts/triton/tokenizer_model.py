"""Triton python-backend model: tokenizes TEXT into the ONNX graph's inputs (the ensemble's first step).

Shipped as ``tokenizer/1/model.py`` next to the run's ``tokenizer.json`` and ``tokenizers.whl``. The
Triton image's Python has no ``tokenizers`` package (the model would fail to load with "No module named
'tokenizers'") and Triton installs nothing at start-up, so pack stages the wheel of the release that
wrote ``tokenizer.json`` and the model unpacks it into a scratch folder on its import path at load.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import zipfile
from typing import Any

import numpy as np

WHEEL = "tokenizers.whl"


def use_shipped_wheel(folder: str) -> str | None:
    """Put the wheel shipped in ``folder`` first on the import path; the unpacked folder, or None.

    A scratch folder, since the model repository may be mounted read-only; a wheel is a zip whose
    top level is importable as is.
    """
    wheel = os.path.join(folder, WHEEL)
    if not os.path.isfile(wheel):
        return None
    target = tempfile.mkdtemp(prefix="tokenizers-")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    sys.path.insert(0, target)
    return target


def load_tokenizer(folder: str, max_length: int) -> Any:
    """The fast tokenizer from ``tokenizer.json``, truncating to ``max_length`` and padding each batch."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_length)
    tokenizer.enable_padding()
    return tokenizer


def encode(tokenizer: Any, texts: list[str], outputs: list[str]) -> dict[str, np.ndarray]:
    """The graph's inputs for ``texts``: int64 arrays [batch, tokens], only the names asked for (F03)."""
    encodings = tokenizer.encode_batch(texts)
    fields = {
        "input_ids": [e.ids for e in encodings],
        "attention_mask": [e.attention_mask for e in encodings],
        "token_type_ids": [e.type_ids for e in encodings],
    }
    return {name: np.asarray(fields[name], dtype=np.int64) for name in outputs}


def texts_of(array: np.ndarray) -> list[str]:
    """TYPE_STRING tensors arrive as numpy object arrays of bytes."""
    return [item.decode("utf-8") if isinstance(item, bytes) else str(item) for item in array.reshape(-1)]


class TritonPythonModel:
    def initialize(self, args: dict[str, str]) -> None:
        config = json.loads(args["model_config"])
        parameters = {k: v["string_value"] for k, v in (config.get("parameters") or {}).items()}
        folder = os.path.join(args["model_repository"], args["model_version"])
        self.outputs = parameters["outputs"].split(",")
        use_shipped_wheel(folder)
        self.tokenizer = load_tokenizer(folder, int(parameters["max_length"]))

    def execute(self, requests: list[Any]) -> list[Any]:
        import triton_python_backend_utils as pb_utils  # provided by Triton's python backend

        responses = []
        for request in requests:
            texts = texts_of(pb_utils.get_input_tensor_by_name(request, "TEXT").as_numpy())
            tensors = [
                pb_utils.Tensor(name, array)
                for name, array in encode(self.tokenizer, texts, self.outputs).items()
            ]
            responses.append(pb_utils.InferenceResponse(output_tensors=tensors))
        return responses
