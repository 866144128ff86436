"""DJL Serving (LMI) handler: every model in deploybench-models.json, served from one container.

Requests are the HF inference DLC's (``{"inputs": [...], "parameters": {"batch_size": 8}}``) plus
an optional ``"model"`` naming which model answers (the first one by default); responses are
``{"embeddings": [...]}`` (mean-pooled, L2-normalised) or ``{"predictions": [{"label", "score"}]}``,
the same as ``code/inference.py``, so one client serves every mode.

The CPU image (djl-inference *-cpu-full) has no Python model packages: requirements.txt beside
this file brings transformers, torch, sentencepiece, protobuf, peft and accelerate (F17).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

MODELS_FILE = "deploybench-models.json"
DEFAULT_BATCH_SIZE = 32


@dataclass
class Served:
    name: str
    task: str
    tokenizer: Any
    model: Any
    labels: list[str]
    device: str
    max_length: int


def entries(model_dir: str) -> list[dict[str, Any]]:
    """The models to serve: name, where (a folder under model_dir, or a Hub id), task."""
    with open(os.path.join(model_dir, MODELS_FILE), encoding="utf-8") as handle:
        listed = json.load(handle)["models"]
    if not listed:
        raise ValueError(f"{MODELS_FILE} lists no model")
    return listed


def load(entry: dict[str, Any], model_dir: str, *, device: str, dtype: str) -> Served:
    import torch
    from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

    where = entry["source"]
    local = os.path.join(model_dir, where)
    path = local if os.path.isdir(local) else where
    kind = AutoModelForSequenceClassification if entry["task"] == "classification" else AutoModel
    torch_dtype = torch.float16 if dtype == "fp16" and device != "cpu" else torch.float32
    model = kind.from_pretrained(path, torch_dtype=torch_dtype).to(device).eval()
    labels = (
        [model.config.id2label[i] for i in range(model.config.num_labels)]
        if entry["task"] == "classification"
        else []
    )
    tokenizer = AutoTokenizer.from_pretrained(path)
    max_length = int(entry.get("max_length") or getattr(tokenizer, "model_max_length", 512) or 512)
    print(f"deploybench: loaded {entry['name']} from {path} on {device}", flush=True)
    return Served(entry["name"], entry["task"], tokenizer, model, labels, device, min(max_length, 8192))


def _pairs(inputs: Any) -> list[tuple[str, str | None]]:
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, list) or not inputs:
        raise ValueError("'inputs' must be a non-empty string or list")
    pairs: list[tuple[str, str | None]] = []
    for item in inputs:
        if isinstance(item, str):
            pairs.append((item, None))
        elif isinstance(item, (list, tuple)) and len(item) == 2:
            pairs.append((str(item[0]), str(item[1])))
        else:
            raise ValueError(f"cannot read input {item!r}: use a string or [text, text_pair]")
    return pairs


def predict(served: Served, body: dict[str, Any]) -> dict[str, Any]:
    """One request: tokenize in micro-batches of parameters.batch_size, run, pool or classify."""
    import torch

    parameters = body.get("parameters") or {}
    pairs = _pairs(body.get("inputs"))
    batch_size = max(1, int(parameters.get("batch_size", DEFAULT_BATCH_SIZE)))
    max_length = min(int(parameters.get("max_length", served.max_length)), served.max_length)
    padding = "max_length" if parameters.get("padding") == "max_length" else "longest"
    rows: list[Any] = []
    with torch.inference_mode():
        for start in range(0, len(pairs), batch_size):
            chunk = pairs[start : start + batch_size]
            seconds = [p[1] for p in chunk] if any(p[1] is not None for p in chunk) else None
            encoded = served.tokenizer(
                [p[0] for p in chunk],
                seconds,
                padding=padding,
                truncation=True,
                max_length=max_length,
                return_tensors="pt",
            ).to(served.device)
            output = served.model(**encoded)
            if served.task == "classification":
                rows.extend(torch.softmax(output.logits.float(), dim=-1).cpu())
            else:
                mask = encoded["attention_mask"].unsqueeze(-1).to(output.last_hidden_state.dtype)
                pooled = (output.last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                rows.extend(torch.nn.functional.normalize(pooled.float(), p=2, dim=1).cpu())
    if served.task == "classification":
        best = [int(r.argmax()) for r in rows]
        return {
            "predictions": [
                {"label": served.labels[i], "score": float(r[i])} for r, i in zip(rows, best, strict=True)
            ]
        }
    return {"embeddings": [[round(float(v), 7) for v in r] for r in rows]}


class Service:
    """Every listed model, loaded once; requests pick one by ``"model"``."""

    def __init__(self, model_dir: str, *, device: str, dtype: str) -> None:
        listed = entries(model_dir)
        self.default = listed[0]["name"]
        self.models = {e["name"]: load(e, model_dir, device=device, dtype=dtype) for e in listed}

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        name = body.get("model") or self.default
        if name not in self.models:
            raise ValueError(f"model {name!r} is not served here; choose one of {sorted(self.models)}")
        return predict(self.models[name], body)


_SERVICE: Service | None = None


def handle(inputs: Any) -> Any:
    """DJL Serving's entry point (engine=Python): the first call loads every model."""
    from djl_python import Output  # provided by the LMI image

    global _SERVICE
    if _SERVICE is None:
        import torch

        properties = inputs.get_properties()
        device = "cuda" if torch.cuda.is_available() else "cpu"
        _SERVICE = Service(
            properties.get("model_dir", "/opt/ml/model"), device=device, dtype=properties.get("dtype", "fp32")
        )
    if inputs.is_empty():
        return None  # DJL's start-up call: the models are loaded, nothing to answer
    return Output().add_as_json(_SERVICE.answer(inputs.get_as_json()))
