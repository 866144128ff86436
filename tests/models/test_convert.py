"""The convert step on real (tiny, random-weight) encoders of each family: export, parity, fusion."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from tests.conftest import convert_folder
from workflows.conversion.bounded import BoundedRun, run_bounded
from workflows.conversion.families import FAMILIES
from workflows.conversion.manifest import read_manifest
from workflows.conversion.optimize import choose_fp32, start_fusion
from workflows.conversion.source import inspect_folder
from workflows.errors import ParityCheckFailed

ModelFactory = Callable[..., Path]


def run_graph(artifact: Path, texts: list[str] | list[tuple[str, str]]) -> np.ndarray:
    from transformers import AutoTokenizer

    manifest = read_manifest(artifact)
    session = ort.InferenceSession(str(artifact / manifest.onnx_file), providers=["CPUExecutionProvider"])
    tokenizer = AutoTokenizer.from_pretrained(str(artifact / "tokenizer"))
    firsts = [t if isinstance(t, str) else t[0] for t in texts]
    seconds = [t[1] for t in texts if not isinstance(t, str)] or None
    encoded = tokenizer(firsts, seconds, padding=True, return_tensors="np")
    names = {i.name for i in session.get_inputs()}
    return session.run(None, {k: v.astype(np.int64) for k, v in encoded.items() if k in names})[0]


@pytest.mark.parametrize(
    ("family", "task", "inputs"),
    [
        ("xlm-roberta", "classification", ["input_ids", "attention_mask"]),
        ("deberta-v2", "embedding", ["input_ids", "attention_mask"]),
    ],
)
def test_each_family_exports_with_dynamic_axes_and_parity(
    random_model: ModelFactory, tmp_path: Path, family: str, task: str, inputs: list[str]
) -> None:
    # Given a random-weight encoder of the family, whose tokenizer may emit token_type_ids
    source = random_model(family, task)
    # When it is converted
    artifact = convert_folder(source, tmp_path)
    # Then the manifest records the graph's real inputs (no token_type_ids: F03) and passed parity
    manifest = read_manifest(artifact)
    assert manifest.inputs == inputs
    assert manifest.outputs == ["logits" if task == "classification" else "embeddings"]
    assert manifest.parity.passed and manifest.parity.texts == 64
    assert manifest.parity.max_abs_diff < 1e-4
    # And batch and sequence axes are dynamic: 3 inputs of lengths unlike the export's sample
    texts = ["one", "a second, much longer text with many more words in it than the first one", "third"]
    out = run_graph(artifact, [(t, "a hypothesis") for t in texts] if task == "classification" else texts)
    assert out.shape[0] == 3


def test_deberta_gets_no_offline_fusion(random_model: ModelFactory, tmp_path: Path) -> None:
    # Given a DeBERTa-v2 (disentangled attention: the BERT fusion rules must never run on it, F34)
    source = random_model("deberta-v2", "classification")
    # When converted with optimize 'auto'
    artifact = convert_folder(source, tmp_path, optimize="auto")
    # Then the plain export ships and the manifest says why
    manifest = read_manifest(artifact)
    assert manifest.optimization.startswith("none for DeBERTa-v2: disentangled attention")
    assert FAMILIES["deberta-v2"].fusion is None


def test_bert_fusion_is_verified_and_measured(tiny_artifact: Path) -> None:
    # Given the tiny BERT converted with the default optimize 'auto'
    manifest = read_manifest(tiny_artifact)
    # Then the fused graph was parity-checked and timed against the plain export on the build host
    assert "onnxruntime.transformers bert opt_level 1 (Attention×2" in manifest.optimization
    assert "1-thread A/B on the build host" in manifest.optimization
    assert manifest.parity.passed
    assert manifest.warnings == []


def test_a_pass_past_its_time_bound_is_stopped() -> None:
    # When the fusion pass gets less time than Python needs to import onnxruntime
    outcome = run_bounded(
        "fuse",
        {"source": "x.onnx", "target": "y.onnx", "rules": "bert", "num_heads": 2, "hidden_size": 32},
        timeout_s=0.2,
        memory_gib=4,
    )
    # Then it was killed and says so
    assert not outcome.ok
    assert outcome.reason == "ran past its 0.2 s time bound and was stopped"


def test_a_failing_parent_stops_its_running_pass(tmp_path: Path) -> None:
    # Given a pass started in the background
    run = BoundedRun(
        "fuse",
        {"source": "x", "target": "y", "rules": "bert", "num_heads": 1, "hidden_size": 8},
        timeout_s=60,
        memory_gib=4,
    )
    # When the parent fails before waiting for it
    with pytest.raises(RuntimeError), run:
        raise RuntimeError("parity failed")
    # Then the child is gone
    assert run._child.poll() is not None


def test_a_pass_past_its_memory_bound_fails_cleanly() -> None:
    # When the fusion pass may address less memory than onnxruntime needs to load
    outcome = run_bounded(
        "fuse",
        {"source": "x.onnx", "target": "y.onnx", "rules": "bert", "num_heads": 2, "hidden_size": 32},
        timeout_s=120,
        memory_gib=0.15,
    )
    # Then it failed inside its bound, and the reason names the bound
    assert not outcome.ok
    assert outcome.reason.startswith("ran out of its 0.15 GiB memory bound")


def test_an_optimizer_past_its_bound_falls_back_to_the_plain_export(tiny_bert: Path, tmp_path: Path) -> None:
    # Given a plain export of the tiny BERT
    plain = tmp_path / "plain.onnx"
    plain.write_bytes(b"not read: the pass is stopped before it opens the file")
    # When the fusion pass runs under a memory bound it cannot fit in
    config = inspect_folder(tiny_bert).config
    fusion = start_fusion(
        "auto", FAMILIES["bert"], config, plain, tmp_path / "fused.onnx", timeout_s=120, memory_gib=0.15
    )
    choice = choose_fp32(
        mode="auto",
        family=FAMILIES["bert"],
        plain=plain,
        fusion=fusion,
        parity_ok=lambda path: (True, ""),
        timing_shapes={},
    )
    # Then the plain graph ships, with a warning naming the bound (F34)
    assert choice.path == plain
    assert len(choice.warnings) == 1
    assert choice.warnings[0].startswith("the bert fusion pass ran out of its 0.15 GiB memory bound")
    assert "shipping the unoptimised export (F34)" in choice.warnings[0]


def test_a_fused_graph_failing_parity_is_not_shipped(tiny_bert: Path, tmp_path: Path) -> None:
    # Given the real fusion pass on the tiny BERT's export, and a parity gate that refuses it
    from transformers import AutoTokenizer

    from workflows.conversion.export import export_onnx

    folder = inspect_folder(tiny_bert)
    exported, _ = export_onnx(
        folder, "embedding", AutoTokenizer.from_pretrained(str(tiny_bert)), tmp_path / "plain.onnx", opset=17
    )
    # When the fp32 graph is chosen
    fusion = start_fusion(
        "fused",
        FAMILIES["bert"],
        folder.config,
        exported.onnx_path,
        tmp_path / "f.onnx",
        timeout_s=300,
        memory_gib=6,
    )
    choice = choose_fp32(
        mode="fused",
        family=FAMILIES["bert"],
        plain=exported.onnx_path,
        fusion=fusion,
        parity_ok=lambda path: (False, "max |diff| 3.1e-02"),
        timing_shapes={},
    )
    # Then the plain export ships, with the reason
    assert choice.path == exported.onnx_path
    assert choice.warnings == [
        "the fused graph failed the parity gate (max |diff| 3.1e-02); shipping the unoptimised export"
    ]


def test_parity_above_tolerance_fails_the_step_and_leaves_nothing(tiny_bert: Path, tmp_path: Path) -> None:
    # Given a tolerance no float32 graph can meet
    # When converting
    with pytest.raises(ParityCheckFailed, match=r"differs from PyTorch by .* on 64 validation texts"):
        convert_folder(tiny_bert, tmp_path, parity_tolerance=1e-12, optimize="none")
    # Then no artifact folder (complete or partial) was left
    assert not (tmp_path / "artifact").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".artifact")]
