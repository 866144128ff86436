"""Serving code shipped in model.tar.gz under code/, for the Hugging Face inference DLC contract.

The container calls model_fn(model_dir) once per worker, then input_fn -> predict_fn -> output_fn
per request. It loads exactly the ONNX file the artifact manifest names (F30) with onnxruntime,
which the DLC does not ship: code/requirements.txt installs it at container start (F01). Each
worker holds its own session, so the endpoint runs one worker and gives onnxruntime every core
(SAGEMAKER_MODEL_SERVER_WORKERS=1, ORT_INTRA_OP_THREADS=0; F02).

Request:  {"inputs": "text" | ["text", ...] | [["premise", "hypothesis"], ...],
           "parameters": {"batch_size": 32, "padding": "max_length", "max_length": 128,
                          "bucketing": true}}
Response: {"embeddings": [[...], ...]} or {"predictions": [{"label": ..., "score": ...}, ...]}

This file imports nothing from deploybench: it runs inside the container.
"""

from __future__ import annotations

import json
import os

import numpy as np
import onnxruntime as ort

# The artifact manifest's file name. deploybench writes it under the same name
# (workflows/conversion/manifest.py MANIFEST_FILE; a test keeps the two equal). Never
# "manifest.json": the DLC's Multi Model Server reads that as a legacy archive manifest and stops.
MANIFEST_FILE = "deploybench-manifest.json"
DEFAULT_BATCH_SIZE = 32
# What one session.run costs beyond its tokens, in tokens' worth of compute: MiniLM at one thread
# ran 1 x 11 tokens in 5.0 ms and 32 x 25 in 273 ms (0.34 ms a token), so about 4 tokens; taken
# at 16 so that a micro-batch is split off only when that saves clearly more padding than a call.
CALL_COST_TOKENS = 16


def _session(path):
    options = ort.SessionOptions()
    # 0 lets onnxruntime use every core; with one worker (F02) that is the whole instance.
    options.intra_op_num_threads = int(os.environ.get("ORT_INTRA_OP_THREADS", "0"))
    options.inter_op_num_threads = 1
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def _checked_onnx_path(model_dir, manifest):
    """The manifest's ONNX file, refused when missing or not the size the manifest records (F22, F30)."""
    name = manifest["onnx_file"]
    path = os.path.join(model_dir, name)
    if not os.path.isfile(path):
        present = sorted(f for f in os.listdir(model_dir) if f.endswith(".onnx"))
        raise FileNotFoundError(f"the manifest names {name}, which is not in {model_dir} (found: {present})")
    expected = next((f["size_bytes"] for f in manifest.get("files", []) if f["path"] == name), None)
    size = os.path.getsize(path)
    if expected is not None and size != expected:
        raise OSError(f"{name} is {size} bytes, the manifest says {expected}: truncated or replaced")
    return path


def model_fn(model_dir, context=None):
    from transformers import AutoTokenizer

    with open(os.path.join(model_dir, MANIFEST_FILE), encoding="utf-8") as handle:
        manifest = json.load(handle)
    onnx_path = _checked_onnx_path(model_dir, manifest)
    session = _session(onnx_path)
    tokenizer = AutoTokenizer.from_pretrained(os.path.join(model_dir, "tokenizer"))
    print(
        f"deploybench: loaded {manifest['onnx_file']} ({manifest.get('precision', '?')}, "
        f"{os.path.getsize(onnx_path)} bytes), inputs {[i.name for i in session.get_inputs()]}",
        flush=True,
    )
    return {
        "session": session,
        "tokenizer": tokenizer,
        "manifest": manifest,
        "onnx_file": manifest["onnx_file"],
        # F03: feed only what the graph takes, whatever the tokenizer emits.
        "input_names": [i.name for i in session.get_inputs()],
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
            second = item.get("text_pair")
            pairs.append((str(item["text"]), None if second is None else str(second)))
        else:
            raise ValueError(
                f"cannot read input {item!r}: use a string, [text, text_pair] or {{'text', 'text_pair'}}"
            )
    return pairs


def _tokenize(tokenizer, pairs, max_length):
    """Token ids of every input, unpadded (padding happens per micro-batch)."""
    firsts = [p[0] for p in pairs]
    if all(p[1] is None for p in pairs):
        return tokenizer(firsts, truncation=True, max_length=max_length)
    if any(p[1] is None for p in pairs):
        raise ValueError("mix of single texts and text pairs in one request; send one kind")
    return tokenizer(firsts, [p[1] for p in pairs], truncation=True, max_length=max_length)


def _pad(model, encoded, rows, length):
    """One micro-batch: the graph's inputs for ``rows``, padded to ``length``."""
    tokenizer = model["tokenizer"]
    pad_values = {"input_ids": tokenizer.pad_token_id or 0, "token_type_ids": tokenizer.pad_token_type_id}
    left = tokenizer.padding_side == "left"
    feed = {}
    for name in model["input_names"]:
        batch = np.full((len(rows), length), pad_values.get(name, 0), dtype=np.int64)
        values = encoded.get(name)
        for out_row, row in enumerate(rows):
            # A graph input the tokenizer does not emit (token_type_ids of a single segment) is zeros.
            ids = values[row] if values is not None else [0] * len(encoded["input_ids"][row])
            if left:
                batch[out_row, length - len(ids) :] = ids
            else:
                batch[out_row, : len(ids)] = ids
        feed[name] = batch
    return feed


def length_buckets(order, lengths, batch_size):
    """Split rows sorted by length into micro-batches of at most ``batch_size`` that pad least.

    Each micro-batch pads to its own longest text, so a request of 32 natural texts ran 1.8-1.9x
    faster in length buckets than as one batch padded to its longest. The split minimises padded
    tokens plus ``CALL_COST_TOKENS`` per call (dynamic programming over the sorted lengths).
    """
    count = len(order)
    best = [0.0] + [float("inf")] * count
    start = [0] * (count + 1)
    for end in range(1, count + 1):
        for first in range(max(0, end - batch_size), end):
            cost = best[first] + (end - first) * lengths[order[end - 1]] + CALL_COST_TOKENS
            if cost < best[end]:
                best[end], start[end] = cost, first
    buckets, end = [], count
    while end > 0:
        buckets.append(order[start[end] : end])
        end = start[end]
    return buckets[::-1]


def predict_fn(data, model, context=None):
    parameters = data.get("parameters") or {}
    pairs = _pairs(data.get("inputs"))
    manifest = model["manifest"]
    limit = manifest["max_sequence_length"]
    max_length = min(int(parameters.get("max_length", limit)), limit)
    # F31: the batch size is the caller's; without it every text would run alone.
    batch_size = max(1, int(parameters.get("batch_size", DEFAULT_BATCH_SIZE)))
    # F32: a benchmark at a target length pads every text to it.
    pad_to_max = parameters.get("padding") == "max_length"

    encoded = _tokenize(model["tokenizer"], pairs, max_length)
    lengths = [len(ids) for ids in encoded["input_ids"]]
    if pad_to_max or parameters.get("bucketing") is False:
        order = list(range(len(pairs)))
        buckets = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    else:
        order = sorted(range(len(pairs)), key=lengths.__getitem__)
        buckets = length_buckets(order, lengths, batch_size)
    outputs = [None] * len(pairs)
    session = model["session"]
    for rows in buckets:
        length = max_length if pad_to_max else max(lengths[r] for r in rows)
        result = session.run(None, _pad(model, encoded, rows, length))[0]
        for position, row in enumerate(rows):
            outputs[row] = result[position]
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
