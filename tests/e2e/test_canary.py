"""The pre-spend canary: the packed artifact answers once per task in the image's container-equivalent environment."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import convert_folder
from tests.support.architectures import CLASS_LOOKUP_CODE
from tests.support.local_sagemaker import HF_IMAGE
from workflows.artifact.tarball import write_tarball
from workflows.container.canary import CANARY_ENV, pipeline_canary, run_canary
from workflows.container.environment import DlcUnavailable, java_version
from workflows.conversion.manifest import file_entries, read_manifest, write_manifest
from workflows.diagnosis import diagnose, evidence_from_text

ModelFactory = Callable[..., Path]


@pytest.fixture(scope="module")
def packed(random_model: ModelFactory, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ModernBERT classifier (tokenizer_class TokenizersBackend), converted and packed."""
    root = tmp_path_factory.mktemp("canary")
    artifact = convert_folder(random_model("modernbert", "classification"), root)
    tarball = root / "model.tar.gz"
    write_tarball(artifact, tarball, "fast")
    return tarball


def test_without_the_real_stack_no_canary_is_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # The light server has no container-equivalent environment: the pipeline records no canary
    monkeypatch.setenv(CANARY_ENV, "")
    assert pipeline_canary(object(), "s3://b/k", s3=None, region="us-east-1") is None


@pytest.mark.slow
def test_a_portable_artifact_answers_on_the_older_image(packed: Path) -> None:
    if java_version() is None:
        pytest.skip("no Java: the DLC-like environment is not used here")
    try:
        result = run_canary(packed, image=HF_IMAGE, task="classification")
    except DlcUnavailable as error:
        pytest.skip(f"the DLC-like environment cannot be built here: {error}")
    # Then it passed in the environment of the image's transformers, saying what it could not mirror
    assert result.outcome == "passed", result.error
    assert result.versions["transformers"] == "4.51.3"
    assert result.load_s is not None and 0 < result.load_s < result.seconds
    assert any("torch" in m for m in result.mismatches)
    print(f"canary: {result.seconds:.1f} s (load {result.load_s:.2f} s), versions {result.versions}")


@pytest.mark.slow
def test_an_artifact_read_through_the_class_lookup_is_caught_and_named_f35(
    packed: Path, tmp_path: Path
) -> None:
    if java_version() is None:
        pytest.skip("no Java: the DLC-like environment is not used here")
    # Given the same artifact with the field's serving code (AutoTokenizer), repacked
    artifact = tmp_path / "field"
    artifact.mkdir()
    shutil.unpack_archive(packed, artifact, "gztar")
    (artifact / "code" / "inference.py").write_text(CLASS_LOOKUP_CODE)
    write_manifest(artifact, read_manifest(artifact).model_copy(update={"files": file_entries(artifact)}))
    # When the canary runs it on the transformers 4.51.3 image's environment
    try:
        result = run_canary(artifact, image=HF_IMAGE, task="classification")
    except DlcUnavailable as error:
        pytest.skip(f"the DLC-like environment cannot be built here: {error}")
    # Then it fails before any endpoint exists, with the container's own error, which diagnosis names F35
    assert result.outcome == "failed"
    assert "TokenizersBackend does not exist" in result.error
    assert diagnose(evidence_from_text(result.error, origin="canary")).id == "F35"


def test_the_cli_canary_is_skipped_on_request_or_for_a_source_built_on_aws() -> None:
    from tests.conftest import fast_spec
    from workflows.cli.canary import canary_before_start

    spec = fast_spec("bundled")
    assert canary_before_start(spec, run_id="r", skip=True, region="us-east-1") == {
        "outcome": "skipped",
        "reason": "--skip-canary",
    }
    remote = fast_spec("s3://models/minilm/")
    skipped = canary_before_start(remote, run_id="r", skip=False, region="us-east-1")
    assert skipped["outcome"] == "skipped" and "s3://models/minilm/" in skipped["reason"]


def test_the_report_names_the_canarys_outcome_time_and_versions() -> None:
    from workflows.reports.markdown import canary_line

    line = canary_line(
        {
            "outcome": "passed",
            "seconds": 12.34,
            "image": "img:tag",
            "versions": {"transformers": "4.51.3", "torch": "2.13.0"},
        }
    )
    assert (
        line == "- pre-spend canary: **passed** in 12.3 s (transformers 4.51.3, torch 2.13.0; image img:tag)"
    )
    assert "skipped (--skip-canary)" in canary_line({"outcome": "skipped", "reason": "--skip-canary"})
