"""Tasks end to end in process: conversion, then code/inference.py's answers against transformers' own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import fast_spec
from tests.support.tasks import (
    build_cross_encoder,
    reference_embeddings,
    reference_logits,
    reference_zero_shot,
    serving_code,
    with_st_layout,
)
from workflows.contracts import StepRequest
from workflows.conversion.build import build_artifact
from workflows.conversion.manifest import read_manifest
from workflows.conversion.pooling import choose_pooling, layout_pooling
from workflows.errors import ModelSourceInvalid, SpecInvalid

TEXTS = ["A short text.", "A somewhat longer text about the weather in Lisbon this week.", "Three words here"]
PAIRS = [["A man is eating.", "Someone eats food."], ["The sky is blue.", "It is raining hard."]]
SERVING = serving_code()


def convert(source: Path, root: Path, **model: Any) -> Path:
    spec = fast_spec(source, model=model)
    build_artifact(
        StepRequest(run_id="t", spec=spec), source=source, out=root / "artifact", scratch=root / "s"
    )
    return root / "artifact"


def ask(artifact: Path, inputs: Any, **parameters: Any) -> dict[str, Any]:
    model = SERVING.model_fn(str(artifact))
    data = SERVING.input_fn(json.dumps({"inputs": inputs, "parameters": parameters}), "application/json")
    return dict(json.loads(SERVING.output_fn(SERVING.predict_fn(data, model), "application/json")))


# --- pooling from the sentence-transformers layout ------------------------------------------------


@pytest.mark.parametrize(
    ("pooling", "normalize", "expected"),
    [
        ("cls", False, ("cls", False)),
        ("last_token", True, ("last_token", True)),
        ("mean", True, ("mean", True)),
    ],
)
def test_the_layout_names_the_pooling_and_normalisation(
    tiny_bert: Path, tmp_path: Path, pooling: str, normalize: bool, expected: tuple[str, bool]
) -> None:
    folder = with_st_layout(tiny_bert, tmp_path / "st", pooling=pooling, normalize=normalize)
    found = layout_pooling(folder)
    assert found is not None and (found.mode, found.normalize) == expected
    assert "1_Pooling/config.json" in found.basis


def test_without_a_layout_the_spec_chooses_and_mean_normalised_is_the_default(tiny_bert: Path) -> None:
    assert layout_pooling(tiny_bert) is None
    assert (choose_pooling(tiny_bert, pooling="auto", normalize=None).mode, True) == ("mean", True)
    chosen = choose_pooling(tiny_bert, pooling="last_token", normalize=False)
    assert (chosen.mode, chosen.normalize) == ("last_token", False) and "model.pooling" in chosen.basis


def test_a_spec_contradicting_the_layout_and_layouts_the_graph_cannot_pool_are_refused(
    tiny_bert: Path, tmp_path: Path
) -> None:
    cls = with_st_layout(tiny_bert, tmp_path / "cls", pooling="cls", normalize=False)
    with pytest.raises(SpecInvalid, match="contradict the model's own layout") as refused:
        choose_pooling(cls, pooling="mean", normalize=None)
    assert "drop model.pooling" in refused.value.fix
    dense = with_st_layout(tiny_bert, tmp_path / "dense", pooling="mean", normalize=True, extra=["Dense"])
    with pytest.raises(ModelSourceInvalid, match=r"module\(s\) \['Dense'\] after the encoder"):
        layout_pooling(dense)
    maxed = with_st_layout(tiny_bert, tmp_path / "max", pooling="pooling_mode_max_tokens", normalize=False)
    with pytest.raises(ModelSourceInvalid, match="pooling_mode_max_tokens"):
        layout_pooling(maxed)


# --- served answers against transformers ---------------------------------------------------------


@pytest.mark.parametrize(("pooling", "normalize"), [("cls", False), ("last_token", True)])
def test_embeddings_are_pooled_as_the_layout_says(
    tiny_bert: Path, tmp_path: Path, pooling: str, normalize: bool
) -> None:
    # Given a sentence-transformers folder pooling by CLS (not normalised) or by last token (normalised)
    folder = with_st_layout(tiny_bert, tmp_path / "st", pooling=pooling, normalize=normalize)
    # When it is converted and asked for embeddings
    artifact = convert(folder, tmp_path)
    served = np.array(ask(artifact, TEXTS)["embeddings"])
    # Then the manifest says how it pools, and the vectors are transformers' pooled the same way
    manifest = read_manifest(artifact)
    assert (manifest.pooling, manifest.normalize) == (pooling, normalize)
    expected = reference_embeddings(folder, TEXTS, pooling=pooling, normalize=normalize)
    assert np.abs(served - expected).max() < 1e-4
    assert np.allclose(np.linalg.norm(served, axis=1), 1.0, atol=1e-5) is normalize


@pytest.fixture(scope="module")
def nli(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from workflows.conversion.random_models import build_tiny_bert

    root = tmp_path_factory.mktemp("nli")
    source = build_tiny_bert(root / "source", task="classification")
    return source, convert(source, root, task="classification")


def test_classification_of_single_texts_and_of_pairs_matches_transformers(nli: tuple[Path, Path]) -> None:
    source, artifact = nli
    for inputs in (TEXTS, PAIRS):
        served = ask(artifact, inputs)["predictions"]
        logits = reference_logits(
            source, [(p[0], p[1]) if isinstance(p, list) else (p, None) for p in inputs]
        )
        probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        labels = read_manifest(artifact).labels
        assert [p["label"] for p in served] == [labels[i] for i in probabilities.argmax(axis=1)]
        assert np.allclose([p["score"] for p in served], probabilities.max(axis=1), atol=1e-4)


@pytest.mark.parametrize("multi_label", [False, True])
def test_zero_shot_scores_through_the_entailment_label_as_transformers_pipeline_does(
    nli: tuple[Path, Path], multi_label: bool
) -> None:
    source, artifact = nli
    labels, template = ["weather", "sport", "politics"], "This text is about {}."
    served = ask(
        artifact, TEXTS[1], candidate_labels=labels, hypothesis_template=template, multi_label=multi_label
    )
    from transformers import pipeline

    reference = pipeline("zero-shot-classification", model=str(source), tokenizer=str(source), device="cpu")(
        TEXTS[1], candidate_labels=labels, hypothesis_template=template, multi_label=multi_label
    )
    (prediction,) = served["predictions"]
    assert prediction["sequence"] == TEXTS[1]
    assert prediction["labels"] == reference["labels"]
    assert np.allclose(prediction["scores"], reference["scores"], atol=1e-4)
    if not multi_label:
        assert sum(prediction["scores"]) == pytest.approx(1.0, abs=1e-5)
        assert reference_zero_shot(source, TEXTS[1], labels, template)["labels"] == prediction["labels"]


def test_zero_shot_needs_an_entailment_label_and_a_template_with_a_slot(nli: tuple[Path, Path]) -> None:
    _, artifact = nli
    with pytest.raises(ValueError, match="must contain '\\{\\}'"):
        ask(artifact, TEXTS[0], candidate_labels=["a"], hypothesis_template="no slot")
    model = SERVING.model_fn(str(artifact))
    model["manifest"] = {**model["manifest"], "labels": ["LABEL_0", "LABEL_1", "LABEL_2"]}
    with pytest.raises(ValueError, match="needs an NLI head with an entailment label"):
        SERVING.predict_fn({"inputs": TEXTS[0], "parameters": {"candidate_labels": ["a"]}}, model)


def test_reranking_scores_each_passage_against_the_query_and_ranks_them(tmp_path: Path) -> None:
    # Given a cross-encoder (one relevance logit) converted for reranking
    source = build_cross_encoder(tmp_path / "reranker")
    artifact = convert(source, tmp_path, task="reranking")
    query, passages = "weather in Lisbon", TEXTS
    # When a query with passages is sent
    served = ask(artifact, {"query": query, "passages": passages})
    # Then each score is the sigmoid of transformers' logit for (query, passage), in input order
    logits = reference_logits(source, [(query, p) for p in passages])[:, 0]
    expected = 1 / (1 + np.exp(-logits))
    assert np.allclose(served["scores"], expected, atol=1e-4)
    assert served["ranking"] == [int(i) for i in np.argsort(-expected)]
    assert read_manifest(artifact).task == "reranking"
    # And a malformed request names the shape it takes
    with pytest.raises(ValueError, match="'query': str, 'passages'"):
        ask(artifact, {"query": query, "passages": []})


def test_reranking_is_refused_for_modes_that_do_not_run_the_serving_code() -> None:
    with pytest.raises(SpecInvalid, match="model.task 'reranking' is served by code/inference.py"):
        fast_spec(
            "bundled",
            model={"task": "reranking"},
            hosting={"mode": "vllm", "instance_type_fallbacks": ["ml.g5.xlarge"]},
        )
