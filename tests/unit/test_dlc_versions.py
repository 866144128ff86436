"""The local container environment mirrors the chosen image's libraries, read from the image table."""

from __future__ import annotations

import pytest

from tests.conftest import fast_spec
from workflows.container.environment import base_requirements, environment_key
from workflows.container.versions import TOOLKIT_TRANSFORMERS_CEILING, libraries_for_image
from workflows.hosting.image_choice import image_for
from workflows.images.table import HF_INFERENCE, build_versions, family_entry


@pytest.mark.parametrize("build", build_versions(HF_INFERENCE))
def test_a_spec_selecting_a_build_gets_that_builds_transformers(build: str) -> None:
    # Given a spec that selects one of the table's HF builds
    spec = fast_spec("bundled", hosting={"image_version": build})
    uri = image_for(HF_INFERENCE, spec.hosting, "ml.c6i.xlarge", "us-east-1")
    # When the local environment's libraries are derived from the image it deploys
    libraries = libraries_for_image(uri)
    # Then they are the table's, and the environment installs exactly that transformers, or (for
    # transformers 5, which the published toolkit does not import under) its ceiling, said as a mismatch
    entry = family_entry(HF_INFERENCE)["builds"][build]
    assert libraries.build == build and libraries.transformers in entry["sdk"]
    assert f"pytorch{libraries.torch}" in entry["sdk"]
    assert f"py{libraries.python.replace('.', '')}" in entry["cpu"]["tag"]
    installed = libraries.local_transformers()
    assert f"transformers[sentencepiece,sklearn]=={installed}" in base_requirements(libraries)
    if libraries.transformers.startswith("4."):
        assert installed == libraries.transformers
    else:
        assert installed == TOOLKIT_TRANSFORMERS_CEILING
        assert any(
            f"transformers {installed} here, {libraries.transformers}" in m for m in libraries.mismatches()
        )


def test_each_build_has_its_own_environment_and_the_default_is_the_tables() -> None:
    keys = {environment_key(libraries_for_image(image_for_build(b))) for b in build_versions(HF_INFERENCE)}
    assert len(keys) == len(build_versions(HF_INFERENCE))
    default = libraries_for_image(None)
    assert default.build == family_entry(HF_INFERENCE)["default"]
    assert environment_key() == environment_key(default)


def image_for_build(build: str) -> str:
    return image_for(
        HF_INFERENCE, fast_spec("bundled", hosting={"image_version": build}).hosting, None, "us-east-1"
    )


def test_what_cannot_be_mirrored_is_said() -> None:
    # torch stays this machine's CPU build and the toolkit is not in the table: both are recorded
    libraries = libraries_for_image(image_for_build("4.51.3"))
    mismatches = " ".join(libraries.mismatches())
    assert f"{libraries.torch} in the image" in mismatches and "CPU build" in mismatches
    assert "toolkit" in mismatches
    assert libraries.as_dict()["mismatches"] == libraries.mismatches()
    # The torch requirement is the installed build, never the image's
    [torch_line] = [r for r in base_requirements(libraries) if r.startswith("torch==")]
    assert torch_line == f"torch=={libraries.local_torch()}"


def test_an_hf_tag_not_in_the_table_gets_the_versions_its_tag_names() -> None:
    uri = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-inference:2.3.0-transformers4.48.0-cpu-py311-ubuntu22.04"
    libraries = libraries_for_image(uri)
    assert (libraries.transformers, libraries.torch, libraries.python) == ("4.48.0", "2.3.0", "3.11")
    assert "not in images.yaml" in libraries.source
