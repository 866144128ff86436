"""Models for each task, and in-process references computed with transformers (not the exported graph).

The references run the PyTorch model as transformers loads it and pool, normalise or score in numpy,
so a served answer that matches them matches the model, not deploybench's own wrapper.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from tests.conftest import ROOT

ST_POOLING = {
    "mean": "pooling_mode_mean_tokens",
    "cls": "pooling_mode_cls_token",
    "last_token": "pooling_mode_lasttoken",
}


def serving_code() -> ModuleType:
    """code/inference.py, loaded from its file as the container loads it."""
    spec = importlib.util.spec_from_file_location(
        "inference_tasks", ROOT / "artifacts" / "code" / "inference.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def with_st_layout(
    source: Path, target: Path, *, pooling: str, normalize: bool, extra: list[str] = ()
) -> Path:  # type: ignore[assignment]
    """A copy of ``source`` with a sentence-transformers layout: modules.json and 1_Pooling/config.json."""
    shutil.copytree(source, target)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    modules += [{"idx": 2 + i, "name": str(2 + i), "path": f"{2 + i}_{kind}", "type": f"sentence_transformers.models.{kind}"}
                for i, kind in enumerate([*extra, *(["Normalize"] if normalize else [])])]  # fmt: skip
    (target / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    (target / "1_Pooling").mkdir()
    config = {
        key: key == ST_POOLING.get(pooling, pooling)
        for key in [*ST_POOLING.values(), "pooling_mode_max_tokens"]
    }
    (target / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 32, **config}))
    return target


def build_cross_encoder(target: Path) -> Path:
    """A tiny BERT cross-encoder: one relevance logit (num_labels 1), as rerankers are saved."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    from workflows.conversion.random_models import build_tiny_bert

    base = build_tiny_bert(target.parent / f"{target.name}-base")
    config = BertConfig.from_pretrained(str(base))
    config.num_labels = 1
    config.architectures = ["BertForSequenceClassification"]
    torch.manual_seed(3)
    model = BertForSequenceClassification(config)
    # Random heads give near-equal scores; a wider head spreads them so the ranking is meaningful.
    torch.nn.init.normal_(model.classifier.weight, std=2.0)
    model.save_pretrained(str(target))
    for name in base.iterdir():
        if name.is_file() and name.name not in ("config.json", "model.safetensors"):
            shutil.copy2(name, target / name.name)
    return target


def reference_embeddings(source: Path, texts: list[str], *, pooling: str, normalize: bool) -> np.ndarray:
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(source))
    model = AutoModel.from_pretrained(str(source)).eval()
    encoded = tokenizer(texts, padding=True, truncation=True, max_length=64, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**encoded).last_hidden_state.numpy()
    mask = encoded["attention_mask"].numpy()
    if pooling == "cls":
        pooled = hidden[:, 0]
    elif pooling == "last_token":
        pooled = hidden[np.arange(len(texts)), mask.sum(1) - 1]
    else:
        pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True) if normalize else pooled


def reference_logits(source: Path, pairs: list[tuple[str, str | None]]) -> np.ndarray:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(source))
    model = AutoModelForSequenceClassification.from_pretrained(str(source)).eval()
    firsts, seconds = [p[0] for p in pairs], [p[1] for p in pairs]
    encoded = tokenizer(firsts, seconds if all(seconds) else None, padding=True, truncation=True,
                        max_length=64, return_tensors="pt")  # fmt: skip
    with torch.no_grad():
        return model(**encoded).logits.numpy()


def reference_zero_shot(source: Path, text: str, labels: list[str], template: str) -> dict[str, Any]:
    """transformers' own zero-shot pipeline, the field's reference for NLI zero-shot."""
    from transformers import pipeline

    classify = pipeline("zero-shot-classification", model=str(source), tokenizer=str(source), device="cpu")
    return dict(classify(text, candidate_labels=labels, hypothesis_template=template))
