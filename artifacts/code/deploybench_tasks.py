"""What each task reads from a request and sends back, around the graph's outputs (shipped in code/).

``code/inference.py`` loads this file from its own folder. It imports nothing from deploybench.

embedding       {"inputs": "text" | ["text", ...]}
                -> {"embeddings": [[float, ...], ...]}  (pooled and normalised inside the graph)
classification  {"inputs": "text" | ["text", ...] | [["premise", "hypothesis"], ...]}
                -> {"predictions": [{"label": str, "score": float}, ...]}
  zero-shot     {"inputs": "text" | ["text", ...], "parameters": {"candidate_labels": [str, ...],
                 "hypothesis_template": "This example is {}.", "multi_label": false}}
                -> {"predictions": [{"sequence": str, "labels": [...], "scores": [...]}, ...]}
                (best first; each text is paired with each label's hypothesis and scored by the NLI
                head's entailment logit: softmax over the labels, or entailment against
                contradiction per label with multi_label)
reranking       {"inputs": {"query": str, "passages": [str, ...]}}
                -> {"scores": [float per passage, in input order], "ranking": [passage indices, best first]}
                ({"inputs": [[query, passage], ...]} is scored pair by pair: {"scores": [...]})

A reranker's score is the sigmoid of its one logit (sentence-transformers' CrossEncoder default), or
the softmax probability of the last label for a two-label head.
"""

from __future__ import annotations

import numpy as np

DEFAULT_HYPOTHESIS = "This example is {}."


def _softmax(values, axis=-1):
    shifted = np.exp(values - values.max(axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)


def read_pairs(inputs):
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


def label_index(labels, prefix):
    """The index of the label starting with ``prefix`` (entailment, contradiction), case-insensitive."""
    found = [i for i, label in enumerate(labels) if str(label).lower().startswith(prefix)]
    return found[0] if found else None


class Plan:
    """The pairs to run through the graph and how to turn its stacked outputs into the response."""

    def __init__(self, pairs, finish):
        self.pairs = pairs
        self.finish = finish


def _embedding(data, manifest):
    # Rounded so the JSON stays short; 1e-7 is far below any retrieval-relevant difference.
    return Plan(
        read_pairs(data.get("inputs")),
        lambda out: {"embeddings": np.round(out.astype(np.float64), 7).tolist()},
    )


def _labels(manifest, width):
    return manifest.get("labels") or [f"LABEL_{i}" for i in range(width)]


def _classification(data, manifest):
    parameters = data.get("parameters") or {}
    if parameters.get("candidate_labels") is not None:
        return _zero_shot(data.get("inputs"), parameters, manifest)

    def finish(out):
        probabilities = _softmax(out, axis=1)
        labels = _labels(manifest, out.shape[1])
        best = probabilities.argmax(axis=1)
        return {
            "predictions": [
                {"label": labels[i], "score": float(probabilities[n, i])} for n, i in enumerate(best)
            ]
        }

    return Plan(read_pairs(data.get("inputs")), finish)


def _zero_shot(inputs, parameters, manifest):
    candidates = parameters["candidate_labels"]
    if isinstance(candidates, str):
        candidates = [c.strip() for c in candidates.split(",") if c.strip()]
    if not isinstance(candidates, list) or not candidates or not all(isinstance(c, str) for c in candidates):
        raise ValueError(
            "parameters.candidate_labels must be a non-empty list of strings (or one comma-separated string)"
        )
    template = parameters.get("hypothesis_template", DEFAULT_HYPOTHESIS)
    if not isinstance(template, str) or "{}" not in template:
        raise ValueError(
            f"parameters.hypothesis_template {template!r} must contain '{{}}' where each label goes"
        )
    labels = manifest.get("labels") or []
    entail, contradict = label_index(labels, "entail"), label_index(labels, "contradict")
    if entail is None:
        raise ValueError(
            f"zero-shot classification needs an NLI head with an entailment label; this model's labels are {labels}"
        )
    texts = [text for text, second in read_pairs(inputs) if second is None]
    if len(texts) != (1 if isinstance(inputs, str) else len(inputs)):
        raise ValueError("zero-shot inputs are single texts: the hypotheses are made from candidate_labels")
    multi = bool(parameters.get("multi_label", False))
    pairs = [(text, template.format(label)) for text in texts for label in candidates]

    def finish(out):
        logits = out.reshape(len(texts), len(candidates), out.shape[1])
        if multi:
            # Each label on its own: entailment against contradiction (or against every other label).
            against = logits[..., [contradict, entail]] if contradict is not None else logits
            column = 1 if contradict is not None else entail
            scores = _softmax(against, axis=2)[..., column]
        else:
            scores = _softmax(logits[..., entail], axis=1)
        predictions = []
        for n, text in enumerate(texts):
            order = np.argsort(-scores[n], kind="stable")
            predictions.append(
                {
                    "sequence": text,
                    "labels": [candidates[i] for i in order],
                    "scores": [float(scores[n, i]) for i in order],
                }
            )
        return {"predictions": predictions}

    return Plan(pairs, finish)


def relevance(out):
    """One score per pair: the sigmoid of a single logit, else the softmax of the last label."""
    if out.shape[1] == 1:
        return 1.0 / (1.0 + np.exp(-out[:, 0].astype(np.float64)))
    return _softmax(out.astype(np.float64), axis=1)[:, -1]


def _reranking(data, manifest):
    inputs = data.get("inputs")
    if not isinstance(inputs, dict):
        return Plan(read_pairs(inputs), lambda out: {"scores": [float(s) for s in relevance(out)]})
    query, passages = inputs.get("query"), inputs.get("passages")
    if not isinstance(query, str) or not isinstance(passages, list) or not passages:
        raise ValueError(
            "reranking takes {'inputs': {'query': str, 'passages': [str, ...]}} with at least one passage"
        )
    if not all(isinstance(p, str) for p in passages):
        raise ValueError("every passage must be a string")

    def finish(out):
        scores = relevance(out)
        return {
            "scores": [float(s) for s in scores],
            "ranking": [int(i) for i in np.argsort(-scores, kind="stable")],
        }

    return Plan([(query, passage) for passage in passages], finish)


TASKS = {"embedding": _embedding, "classification": _classification, "reranking": _reranking}


def plan(data, manifest):
    """The pairs and the response builder for one request of the manifest's task."""
    task = manifest.get("task", "embedding")
    if task not in TASKS:
        raise ValueError(f"task {task!r} is not served by this code; it serves {sorted(TASKS)}")
    return TASKS[task](data, manifest)
