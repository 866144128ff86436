"""The serving code shipped in model.tar.gz, called as the container calls it."""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from tests.conftest import ROOT, convert_folder
from workflows.benchmark.texts import natural_texts
from workflows.conversion.manifest import MANIFEST_FILE


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


class RecordingSession:
    """Wraps the real session and records the shape of every batch it runs."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.shapes: list[tuple[int, int]] = []

    def run(self, outputs: Any, feed: dict[str, np.ndarray]) -> Any:
        self.shapes.append(feed["input_ids"].shape)
        return self.session.run(outputs, feed)


def call(inference: ModuleType, model: Any, inputs: Any, **parameters: Any) -> dict[str, Any]:
    body = json.dumps({"inputs": inputs, "parameters": parameters})
    data = inference.input_fn(body, "application/json")
    return json.loads(inference.output_fn(inference.predict_fn(data, model), "application/json"))


def embed(inference: ModuleType, model: Any, inputs: Any, **parameters: Any) -> np.ndarray:
    return np.array(call(inference, model, inputs, **parameters)["embeddings"])


def recording(model: Any) -> tuple[dict[str, Any], RecordingSession]:
    session = RecordingSession(model["session"])
    return {**model, "session": session}, session


def test_manifest_name_is_the_one_deploybench_writes(inference: ModuleType) -> None:
    assert inference.MANIFEST_FILE == MANIFEST_FILE


def test_feeds_only_the_graph_inputs(model: Any) -> None:
    assert model["input_names"] == ["input_ids", "token_type_ids", "attention_mask"]


def test_length_sorted_micro_batches_keep_request_order(inference: ModuleType, model: Any) -> None:
    # Given texts of very different lengths, more than one micro-batch
    texts = natural_texts(11, seed=3)
    watched, session = recording(model)
    # When embedded together with batch_size 4 and one by one
    together = embed(inference, watched, texts, batch_size=4)
    alone = np.concatenate([embed(inference, model, [t]) for t in texts])
    # Then each row belongs to its own text
    assert together.shape == (11, 32)
    np.testing.assert_allclose(together, alone, atol=1e-5)
    # And no micro-batch exceeded batch_size (F31); they ran shortest first, each padded to its own longest
    rows = [r for r, _ in session.shapes]
    assert sum(rows) == 11 and max(rows) <= 4 and len(rows) >= 3
    lengths = [length for _, length in session.shapes]
    assert lengths == sorted(lengths) and lengths[0] < lengths[-1]


def test_buckets_split_where_padding_costs_more_than_a_call(inference: ModuleType) -> None:
    # Two clusters of lengths: one bucket each, not one batch padded to 100
    lengths = [5, 100, 6, 101, 5, 99, 6, 100]
    order = sorted(range(8), key=lengths.__getitem__)
    assert inference.length_buckets(order, lengths, 32) == [[0, 4, 2, 6], [5, 1, 7, 3]]
    # Equal lengths: one call, up to batch_size rows
    assert inference.length_buckets(list(range(6)), [20] * 6, 32) == [list(range(6))]
    assert [len(b) for b in inference.length_buckets(list(range(6)), [20] * 6, 4)] == [2, 4]


def test_batch_size_is_honoured(inference: ModuleType, model: Any) -> None:
    # When 8 texts of one length are sent with batch_size 8, then with batch_size 1
    watched, session = recording(model)
    texts = ["the same number of words here"] * 8
    embed(inference, watched, texts, batch_size=8)
    embed(inference, watched, texts, batch_size=1)
    # Then they ran as one batch of 8, then one by one (F31)
    assert [rows for rows, _ in session.shapes] == [8] + [1] * 8


def test_bucketing_can_be_switched_off(inference: ModuleType, model: Any) -> None:
    watched, session = recording(model)
    embed(inference, watched, natural_texts(10, seed=2), batch_size=32, bucketing=False)
    assert [rows for rows, _ in session.shapes] == [10]


def test_pad_to_max_length(inference: ModuleType, model: Any) -> None:
    # When asked to pad (a benchmark at a target length, F32)
    watched, session = recording(model)
    padded = embed(inference, watched, ["short text", "another"], padding="max_length", max_length=48)
    natural = embed(inference, model, ["short text", "another"])
    # Then the graph really ran 48 tokens, and mean pooling ignores the padding
    assert session.shapes == [(2, 48)]
    np.testing.assert_allclose(padded, natural, atol=1e-5)


def test_max_length_cannot_exceed_the_artifact_limit(inference: ModuleType, model: Any) -> None:
    watched, session = recording(model)
    embed(inference, watched, ["x"], padding="max_length", max_length=100_000)
    assert session.shapes == [(1, model["manifest"]["max_sequence_length"])]


def test_text_pairs_use_the_second_segment(inference: ModuleType, model: Any) -> None:
    pair = embed(inference, model, [["a premise", "a hypothesis"]])
    joined = embed(inference, model, ["a premise a hypothesis"])
    assert pair.shape == (1, 32)
    assert not np.allclose(pair, joined, atol=1e-4)
    assert embed(inference, model, "one string").shape == (1, 32)
    assert (
        embed(inference, model, [{"text": "a premise", "text_pair": "a hypothesis"}]).tolist()
        == pair.tolist()
    )


@pytest.mark.parametrize("bad", [[], 42, [{"no": "text"}], ["single", ["a", "pair"]]])
def test_bad_inputs_name_the_problem(inference: ModuleType, model: Any, bad: Any) -> None:
    with pytest.raises(ValueError, match="inputs|cannot read|mix of single texts"):
        inference.predict_fn({"inputs": bad}, model)


def test_rejects_other_content_types(inference: ModuleType) -> None:
    with pytest.raises(ValueError, match="not supported"):
        inference.input_fn(b"x", "text/csv")


def test_intra_op_threads_come_from_the_environment(
    inference: ModuleType, tiny_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORT_INTRA_OP_THREADS", "3")
    loaded = inference.model_fn(str(tiny_artifact))
    assert loaded["session"].get_session_options().intra_op_num_threads == 3


def test_idle_pool_threads_block_instead_of_spinning(inference: ModuleType, model: Any) -> None:
    # Given the served session, When its options are read back, Then its pool does not spin
    options = model["session"].get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert options.inter_op_num_threads == 1


def rewritten(tiny_artifact: Path, tmp_path: Path, change: Callable[[Path, dict[str, Any]], None]) -> Path:
    artifact = tmp_path / "artifact"
    shutil.copytree(tiny_artifact, artifact)
    manifest = json.loads((artifact / MANIFEST_FILE).read_text())
    change(artifact, manifest)
    (artifact / MANIFEST_FILE).write_text(json.dumps(manifest))
    return artifact


def test_loads_exactly_the_file_the_manifest_names(
    inference: ModuleType, tiny_artifact: Path, tmp_path: Path
) -> None:
    # Given an artifact whose manifest names quantized.onnx, next to a model.onnx that is garbage
    def rename(artifact: Path, manifest: dict[str, Any]) -> None:
        (artifact / "model.onnx").rename(artifact / "quantized.onnx")
        (artifact / "model.onnx").write_bytes(b"not a graph")
        manifest["onnx_file"] = "quantized.onnx"
        for entry in manifest["files"]:
            entry["path"] = "quantized.onnx" if entry["path"] == "model.onnx" else entry["path"]

    loaded = inference.model_fn(str(rewritten(tiny_artifact, tmp_path, rename)))
    # Then the named file is the one served (F30)
    assert loaded["onnx_file"] == "quantized.onnx"
    assert embed(inference, loaded, ["hello"]).shape == (1, 32)


def test_a_missing_or_resized_onnx_file_is_refused_at_load(
    inference: ModuleType, tiny_artifact: Path, tmp_path: Path
) -> None:
    missing = rewritten(
        tiny_artifact, tmp_path / "a", lambda a, m: m.update(onnx_file="model_quantized.onnx")
    )
    with pytest.raises(
        FileNotFoundError, match=r"names model_quantized.onnx, which is not in .*found: \['model.onnx'\]"
    ):
        inference.model_fn(str(missing))

    def cut(artifact: Path, manifest: dict[str, Any]) -> None:
        data = (artifact / "model.onnx").read_bytes()
        (artifact / "model.onnx").write_bytes(data[: len(data) // 2])

    with pytest.raises(OSError, match="model.onnx is .* bytes, the manifest says .*: truncated or replaced"):
        inference.model_fn(str(rewritten(tiny_artifact, tmp_path / "b", cut)))


def test_requirements_pin_onnxruntime_and_never_optimum(tiny_artifact: Path) -> None:
    import onnxruntime

    requirements = (tiny_artifact / "code" / "requirements.txt").read_text().split()
    assert requirements == [f"onnxruntime=={onnxruntime.__version__}"]


def test_a_classifier_without_token_type_ids_serves_pairs(
    inference: ModuleType, random_model: Callable[..., Path], tmp_path: Path
) -> None:
    # Given a DeBERTa-v2 classifier: its tokenizer emits token_type_ids, its graph does not take them (F03)
    artifact = convert_folder(random_model("deberta-v2", "classification"), tmp_path, optimize="none")
    loaded = inference.model_fn(str(artifact))
    assert loaded["input_names"] == ["input_ids", "attention_mask"]
    # When pairs are classified
    result = call(
        inference, loaded, [["premise one", "hypothesis"], ["a longer premise here", "h"]], batch_size=1
    )
    # Then every input gets a label from the manifest
    assert [p["label"] in ("entailment", "neutral", "contradiction") for p in result["predictions"]] == [
        True,
        True,
    ]
    assert all(0 < p["score"] <= 1 for p in result["predictions"])
