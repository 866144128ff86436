"""Serving code shipped in model.tar.gz under code/, for the Hugging Face inference DLC contract.

The container calls model_fn(model_dir) once per worker, then input_fn -> predict_fn -> output_fn
per request. It loads exactly the ONNX file that deploybench-manifest.json names (F30) with onnxruntime, which
the DLC does not ship: code/requirements.txt installs it at container start (F01).

Request:  {"inputs": "text" | ["text", ...] | [["premise", "hypothesis"], ...],
           "parameters": {"batch_size": 32, "padding": "max_length", "max_length": 128}}
Response: {"embeddings": [[...], ...]} or {"predictions": [{"label": ..., "score": ...}, ...]}
"""

from __future__ import annotations

import json
import os

import numpy as np
import onnxruntime as ort

DEFAULT_BATCH_SIZE = 32
# Never "manifest.json": the DLC's Multi Model Server reads that as a legacy archive manifest and stops.
MANIFEST_FILE = "deploybench-manifest.json"


def _session(path: str) -> ort.InferenceSession:
    options = ort.SessionOptions()
    # 0 lets onnxruntime use every core; with one worker (F02) that is the whole instance.
    options.intra_op_num_threads = int(os.environ.get("ORT_INTRA_OP_THREADS", "0"))
    options.inter_op_num_threads = 1
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def model_fn(model_dir, context=None):
    from transformers import AutoTokenizer

    with open(os.path.join(model_dir, MANIFEST_FILE), encoding="utf-8") as handle:
        manifest = json.load(handle)
    onnx_path = os.path.join(model_dir, manifest["onnx_file"])
    session = _session(onnx_path)
    tokenizer = AutoTokenizer.from_pretrained(os.path.join(model_dir, "tokenizer"))
    print(f"deploybench: loaded {manifest['onnx_file']} ({os.path.getsize(onnx_path)} bytes)", flush=True)
    return {
        "session": session,
        "tokenizer": tokenizer,
        "manifest": manifest,
        # F03: feed only what the graph takes, whatever the tokenizer emits.
        "input_names": {i.name for i in session.get_inputs()},
    }


def input_fn(input_data, content_type, context=None):
    if content_type and not content_type.startswith("application/json"):
        raise ValueError(f"content type {content_type!r} is not supported; send application/json")
    if isinstance(input_data, (bytes, bytearray)):
        input_data = input_data.decode("utf-8")
    return json.loads(input_data)


def _pairs(inputs):
    """Normalise inputs to a list of (text, text_pair or None)."""
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, list) or not inputs:
        raise ValueError("'inputs' must be a non-empty string or list")
    pairs = []
    for item in inputs:
        if isinstance(item, str):
            pairs.append((item, None))
        elif isinstance(item, (list, tuple)) and len(item) == 2:
            pairs.append((str(item[0]), str(item[1])))
        elif isinstance(item, dict) and "text" in item:
            pairs.append((str(item["text"]), item.get("text_pair")))
        else:
            raise ValueError(
                f"cannot read input {item!r}: use a string, [text, text_pair] or {{'text', 'text_pair'}}"
            )
    return pairs


def _encode(model, pairs, padding, max_length):
    texts = [p[0] for p in pairs]
    seconds = [p[1] for p in pairs] if any(p[1] is not None for p in pairs) else None
    encoded = model["tokenizer"](
        texts, seconds, padding=padding, truncation=True, max_length=max_length, return_tensors="np"
    )
    return {k: v.astype(np.int64) for k, v in encoded.items() if k in model["input_names"]}


def predict_fn(data, model, context=None):
    parameters = data.get("parameters") or {}
    pairs = _pairs(data.get("inputs"))
    manifest = model["manifest"]
    max_length = min(
        int(parameters.get("max_length", manifest["max_sequence_length"])), manifest["max_sequence_length"]
    )
    batch_size = max(1, int(parameters.get("batch_size", DEFAULT_BATCH_SIZE)))
    pad_to_max = parameters.get("padding") == "max_length"
    padding = "max_length" if pad_to_max else "longest"

    # Sort by length so each micro-batch pads only to its own longest text, then restore order.
    # Characters stand in for tokens: the order only has to be roughly right, and it is free.
    if pad_to_max or len(pairs) <= batch_size:
        order = list(range(len(pairs)))
    else:
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1] or ""))
    outputs = [None] * len(pairs)
    session = model["session"]
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        feed = _encode(model, [pairs[i] for i in chunk], padding, max_length)
        result = session.run(None, feed)[0]
        for row, index in enumerate(chunk):
            outputs[index] = result[row]
    stacked = np.stack(outputs)
    if manifest["task"] == "classification":
        shifted = np.exp(stacked - stacked.max(axis=1, keepdims=True))
        probabilities = shifted / shifted.sum(axis=1, keepdims=True)
        labels = manifest.get("labels") or [f"LABEL_{i}" for i in range(stacked.shape[1])]
        best = probabilities.argmax(axis=1)
        return {
            "predictions": [
                {"label": labels[i], "score": float(probabilities[n, i])} for n, i in enumerate(best)
            ]
        }
    # Rounded so the JSON stays short; 1e-7 is far below any retrieval-relevant difference.
    return {"embeddings": np.round(stacked.astype(np.float64), 7).tolist()}


def output_fn(prediction, accept, context=None):
    return json.dumps(prediction)
