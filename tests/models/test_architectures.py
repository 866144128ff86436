"""Every architecture users commonly bring exports to ONNX (fast: export alone, one per family).

The slow tier (tests/e2e/test_architectures_served.py) converts each with parity and serves it through
the real container stack.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from tests.support.architectures import ARCHITECTURES, reference_outputs
from workflows.conversion.build import load_tokenizer
from workflows.conversion.export import export_onnx
from workflows.conversion.families import FAMILIES, family_of
from workflows.conversion.random_models import FAMILIES as BUILDABLE
from workflows.conversion.source import inspect_folder

ModelFactory = Callable[..., Path]


def test_the_matrix_names_every_family_a_builder_knows() -> None:
    # Every random-model family is in the architecture matrix, and every one has an export route
    assert set(ARCHITECTURES) == set(BUILDABLE)
    for model_type in {ARCHITECTURES[name] for name in ARCHITECTURES}:
        assert model_type in FAMILIES


@pytest.mark.parametrize("family", sorted(ARCHITECTURES))
def test_each_architecture_exports_with_dynamic_axes(
    random_model: ModelFactory, tmp_path: Path, family: str
) -> None:
    # Given a random-weight classifier of the family, its tokenizer saved by the installed transformers
    source = random_model(family, "classification")
    folder = inspect_folder(source)
    assert folder.model_type == ARCHITECTURES[family]
    assert family_of(folder).name
    tokenizer = load_tokenizer(folder)
    # When it is exported alone (no parity, no fusion)
    exported, _ = export_onnx(folder, "classification", tokenizer, tmp_path / "model.onnx", opset=17)
    # Then the graph takes ids and mask (token types only where the model embeds them) and gives logits
    assert exported.inputs[:1] == ["input_ids"] and "attention_mask" in exported.inputs
    config = json.loads((source / "config.json").read_text())
    assert ("token_type_ids" in exported.inputs) == (
        "token_type_ids" in tokenizer.model_input_names and int(config.get("type_vocab_size", 0) or 0) > 1
    )
    assert exported.outputs == ["logits"]
    assert exported.labels == ["entailment", "neutral", "contradiction"]
    # And a batch of pairs of lengths unlike the trace's sample runs and matches PyTorch
    session = ort.InferenceSession(str(exported.onnx_path), providers=["CPUExecutionProvider"])
    pairs = [("one", "a hypothesis"), ("a second, much longer premise with many more words", "short")]
    encoded = tokenizer([p[0] for p in pairs], [p[1] for p in pairs], padding=True, return_tensors="np")
    feed = {name: encoded[name].astype(np.int64) for name in exported.inputs}
    logits = session.run(None, feed)[0]
    assert logits.shape == (2, 3)
    np.testing.assert_allclose(logits, reference_outputs(source, "classification", pairs), atol=1e-4)
