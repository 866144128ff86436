"""F35: a tokenizer saved by a newer transformers than the container's is portable, or refused before deploy."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tests.architectures_support import CLASS_LOOKUP_CODE, PAIRS, SINGLES, reference_outputs
from tests.conftest import convert_folder, fast_spec
from workflows.conversion.manifest import file_entries, read_manifest, write_manifest
from workflows.conversion.portable_tokenizer import serving_module
from workflows.diagnosis import diagnose, evidence_from_text
from workflows.hosting.modes import run_checks
from workflows.preflight.context import build_context, open_artifact
from workflows.preflight.library_versions import check_tokenizer_portability, image_transformers

ModelFactory = Callable[..., Path]
OLD_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-inference:2.6.0-transformers4.51.3-cpu-py312-ubuntu22.04"
FIELD_ERROR = "Tokenizer class TokenizersBackend does not exist or is not currently imported."


@pytest.fixture(scope="module")
def modernbert_artifact(random_model: ModelFactory, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ModernBERT classifier: transformers 5 saves its tokenizer as ``TokenizersBackend``."""
    source = random_model("modernbert", "classification")
    return convert_folder(source, tmp_path_factory.mktemp("modernbert"))


def test_conversion_records_a_tokenizer_read_without_transformers(modernbert_artifact: Path) -> None:
    # Given a model whose tokenizer_config.json names a class only transformers 5 has
    config = json.loads((modernbert_artifact / "tokenizer" / "tokenizer_config.json").read_text())
    assert config["tokenizer_class"] == "TokenizersBackend"
    # Then the manifest says the served tokenizer is tokenizer.json through the tokenizers library,
    # checked against transformers on single texts and pairs, and names the versions that wrote it
    record = read_manifest(modernbert_artifact).tokenizer
    assert record is not None
    assert record.loader == "tokenizers" and record.tokenizer_class == "TokenizersBackend"
    assert record.checked_texts == 128
    assert set(record.saved_by) == {"transformers", "tokenizers"}


def test_the_served_answers_equal_the_in_process_reference(
    random_model: ModelFactory, modernbert_artifact: Path
) -> None:
    # Given the serving code, loaded as the container loads it
    serving = serving_module()
    model = serving.model_fn(str(modernbert_artifact))
    assert type(model["tokenizer"]).__name__ == "FileTokenizer"
    # When pairs are classified through input_fn -> predict_fn
    body = json.dumps({"inputs": [list(p) for p in PAIRS]})
    answer = serving.predict_fn(serving.input_fn(body, "application/json"), model)
    # Then the probabilities are the softmax of what transformers computes in process
    logits = reference_outputs(random_model("modernbert", "classification"), "classification", PAIRS)
    expected = np.exp(logits - logits.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)
    labels = read_manifest(modernbert_artifact).labels
    for row, prediction in enumerate(answer["predictions"]):
        assert prediction["label"] == labels[int(expected[row].argmax())]
        assert abs(prediction["score"] - expected[row].max()) < 1e-4


def test_the_portable_artifact_passes_preflight_on_an_older_image(
    modernbert_artifact: Path, tmp_path: Path
) -> None:
    # Given the converted artifact and a spec on the transformers 4.51.3 image
    spec = fast_spec("bundled", hosting={"image_version": "4.51.3"}, model={"task": "classification"})
    context = build_context(spec, open_artifact(modernbert_artifact, tmp_path))
    # When preflight runs its artifact checks
    result = run_checks(context)
    # Then F35 was checked and found nothing
    assert any("F35" in line for line in result.checked)
    assert [f for f in result.findings if f.id == "F35"] == []


def test_an_artifact_served_through_the_class_lookup_is_refused_with_the_version_pair(
    modernbert_artifact: Path, tmp_path: Path
) -> None:
    # Given the same tokenizer served by code that loads it through AutoTokenizer
    artifact = tmp_path / "field"
    shutil.copytree(modernbert_artifact, artifact)
    (artifact / "code" / "inference.py").write_text(CLASS_LOOKUP_CODE)
    manifest = read_manifest(artifact)
    write_manifest(artifact, manifest.model_copy(update={"files": file_entries(artifact)}))
    spec = fast_spec("bundled", hosting={"image_version": "4.51.3"}, model={"task": "classification"})
    # When preflight runs
    result = run_checks(build_context(spec, open_artifact(artifact, tmp_path / "open")))
    # Then F35 blocks, naming both versions and the fix, before anything is deployed
    [finding] = [f for f in result.findings if f.id == "F35"]
    assert finding.severity == "blocking"
    assert manifest.tokenizer is not None
    assert f"transformers {manifest.tokenizer.saved_by['transformers']}" in finding.message
    assert "4.51.3" in finding.message and "TokenizersBackend" in finding.message
    assert "tokenizers library" in finding.fix and "hosting.image_version" in finding.fix


def test_a_matching_or_unknown_image_raises_nothing(modernbert_artifact: Path) -> None:
    # The class lookup on an image whose transformers is as new as the saving one is fine
    record = read_manifest(modernbert_artifact).tokenizer
    saved = record.saved_by["transformers"] if record else ""
    same = OLD_IMAGE.replace("transformers4.51.3", f"transformers{saved}")
    folder = modernbert_artifact / "tokenizer"
    assert (
        check_tokenizer_portability(
            code=CLASS_LOOKUP_CODE, tokenizer_dir=folder, tokenizer=record, image=same
        )
        == []
    )
    # An image without a transformers tag (Triton, vLLM) is not this check's to judge
    assert image_transformers("x.dkr.ecr.us-east-1.amazonaws.com/tritonserver:26.05-py3") is None
    found = check_tokenizer_portability(
        code=CLASS_LOOKUP_CODE, tokenizer_dir=folder, tokenizer=record, image=OLD_IMAGE
    )
    assert [f.severity for f in found] == ["blocking"]


def test_the_field_error_text_is_diagnosed_as_f35() -> None:
    # Given the first invoke's answer from the field
    text = f'ModelError: Received client error (400) from primary with message "{{"code": 400, "message": "{FIELD_ERROR}"}}"'
    # Then diagnosis names F35 and the class
    diagnosis = diagnose(evidence_from_text(text, origin="field"))
    assert diagnosis.id == "F35"
    assert "tokenizers library" in diagnosis.fix


def test_single_texts_tokenize_alike_through_both_loaders(modernbert_artifact: Path) -> None:
    # The served loader and transformers agree on single texts too, truncation included
    from transformers import AutoTokenizer

    served = serving_module().load_tokenizer(str(modernbert_artifact / "tokenizer"))
    reference = AutoTokenizer.from_pretrained(str(modernbert_artifact / "tokenizer"))
    texts = [*SINGLES, " ".join(["word"] * 300)]
    got = served(texts, truncation=True, max_length=16)
    expected = reference(texts, truncation=True, max_length=16)
    assert got["input_ids"] == expected["input_ids"]
    assert max(len(ids) for ids in got["input_ids"]) == 16
