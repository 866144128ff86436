"""Triton python-backend model: tokenizes TEXT into the ONNX graph's inputs (the ensemble's first step).

Shipped as ``tokenizer/1/model.py`` next to the run's ``tokenizer.json``. It needs the ``tokenizers``
package in the Python that the python backend runs (an image that has it, or a conda-pack'd
environment named by the model's EXECUTION_ENV_PATH parameter); without it the model fails to load
with "No module named 'tokenizers'".
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np


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
