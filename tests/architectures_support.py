"""The architecture matrix and its in-process reference, shared by the fast and slow architecture tests."""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

# Random-model family -> the config.json model_type it is saved with.
ARCHITECTURES = {
    "bert": "bert",
    "roberta": "roberta",
    "xlm-roberta": "xlm-roberta",
    "distilbert": "distilbert",
    "mpnet": "mpnet",
    "deberta-v2": "deberta-v2",  # shaped like mDeBERTa-v3
    "deberta-v2-conv": "deberta-v2",  # shaped like deberta-v2-xlarge
    "electra": "electra",
    "albert": "albert",
    "camembert": "camembert",
    "modernbert": "modernbert",
}

SINGLES = ["one", "a second, much longer text with many more words in it than the first", "Das ist gut."]
PAIRS = [
    ("A man is playing a guitar on stage.", "Someone makes music."),
    ("The train leaves at eight.", "The train leaves at eight."),
    ("short", "a much longer hypothesis that does not follow from the premise at all"),
]


def reference_outputs(source: Path, task: str, inputs: list[str] | list[tuple[str, str]]) -> np.ndarray:
    """What the artifact must answer, computed in process by transformers on the source folder:
    logits for classifiers; masked mean, L2-normalised, for embeddings (the export's default pooling)."""
    import torch
    from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(source))
    loader: Any = AutoModelForSequenceClassification if task == "classification" else AutoModel
    model = loader.from_pretrained(str(source), attn_implementation="eager").eval()
    firsts = [i if isinstance(i, str) else i[0] for i in inputs]
    seconds = [i[1] for i in inputs if not isinstance(i, str)] or None
    encoded = tokenizer(firsts, seconds, padding=True, return_tensors="pt")
    accepted = set(inspect.signature(model.forward).parameters)
    feed = {k: v for k, v in encoded.items() if k in accepted}
    with torch.no_grad():
        out = model(**feed)
    if task == "classification":
        return np.asarray(out.logits.numpy(), dtype=np.float64)
    mask = encoded["attention_mask"].unsqueeze(-1).to(out.last_hidden_state.dtype)
    pooled = (out.last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return np.asarray(torch.nn.functional.normalize(pooled, p=2, dim=1).numpy(), dtype=np.float64)


# The field's serving code: the tokenizer through transformers' class lookup.
CLASS_LOOKUP_CODE = textwrap.dedent(
    """
    import json, os
    import onnxruntime as ort
    from transformers import AutoTokenizer

    def model_fn(model_dir, context=None):
        session = ort.InferenceSession(os.path.join(model_dir, "model.onnx"))
        return {"session": session, "tokenizer": AutoTokenizer.from_pretrained(os.path.join(model_dir, "tokenizer"))}

    def predict_fn(data, model, context=None):
        feed = model["tokenizer"](data["inputs"], return_tensors="np")
        names = {i.name for i in model["session"].get_inputs()}
        return model["session"].run(None, {k: v for k, v in feed.items() if k in names})[0].tolist()
    """
)
