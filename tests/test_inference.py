"""The serving code shipped in model.tar.gz, called as the container calls it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from tests.conftest import ROOT
from workflows.texts import natural_texts


@pytest.fixture(scope="module")
def inference() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "inference_under_test", ROOT / "artifacts" / "code" / "inference.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.fixture(scope="module")
def model(inference: ModuleType, tiny_artifact: Path) -> Any:
    return inference.model_fn(str(tiny_artifact))


def embed(inference: ModuleType, model: Any, inputs: Any, **parameters: Any) -> np.ndarray:
    body = json.dumps({"inputs": inputs, "parameters": parameters})
    data = inference.input_fn(body, "application/json")
    output = json.loads(inference.output_fn(inference.predict_fn(data, model), "application/json"))
    return np.array(output["embeddings"])


def test_feeds_only_the_graph_inputs(model: Any) -> None:
    assert model["input_names"] == {"input_ids", "attention_mask", "token_type_ids"}


def test_length_sorted_micro_batches_keep_request_order(inference: ModuleType, model: Any) -> None:
    # Given texts of very different lengths, more than one micro-batch
    texts = natural_texts(11, seed=3)
    # When embedded together with batch_size 4 (sorted into micro-batches) and one by one
    together = embed(inference, model, texts, batch_size=4)
    alone = np.concatenate([embed(inference, model, [t]) for t in texts])
    # Then each row belongs to its own text
    assert together.shape == (11, 32)
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_pad_to_max_length(inference: ModuleType, model: Any) -> None:
    padded = embed(inference, model, ["short text"], padding="max_length", max_length=48)
    natural = embed(inference, model, ["short text"])
    # Mean pooling ignores padding, so the vectors agree, but the padded call really ran 48 tokens.
    np.testing.assert_allclose(padded, natural, atol=1e-5)


def test_text_pairs_and_single_string(inference: ModuleType, model: Any) -> None:
    assert embed(inference, model, [["a premise", "a hypothesis"]]).shape == (1, 32)
    assert embed(inference, model, "one string").shape == (1, 32)


@pytest.mark.parametrize("bad", [[], 42, [{"no": "text"}]])
def test_bad_inputs_name_the_problem(inference: ModuleType, model: Any, bad: Any) -> None:
    with pytest.raises(ValueError, match="inputs|cannot read"):
        inference.predict_fn({"inputs": bad}, model)


def test_rejects_other_content_types(inference: ModuleType) -> None:
    with pytest.raises(ValueError, match="not supported"):
        inference.input_fn(b"x", "text/csv")
