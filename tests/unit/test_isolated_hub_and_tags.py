"""Network isolation with a Hub id (vLLM, LMI), and tag values against SageMaker's tag pattern."""

from __future__ import annotations

import re

import botocore.session
import pytest

from workflows.errors import SpecInvalid
from workflows.hosting.modes import run_checks
from workflows.preflight import build_context
from workflows.spec.pipeline import parse_spec

GPU = "ml.g5.xlarge"
SAGEMAKER = botocore.session.get_session().get_service_model("sagemaker")


@pytest.mark.parametrize("mode", ["vllm", "lmi"])
def test_network_isolation_with_a_hub_id_is_blocked_naming_the_s3_source(mode: str) -> None:
    # Given an isolated vLLM or LMI endpoint whose model is a Hub id the container would download
    spec = parse_spec(
        {
            "name": "iso",
            "model": {"source": "BAAI/bge-small-en-v1.5"},
            "hosting": {"mode": mode, "instance_type_fallbacks": [GPU], "network_isolation": True},
        }
    )
    # When preflight runs
    found = [f for f in run_checks(build_context(spec)).findings if f.id == "model-source"]
    # Then it is blocked before any spend, saying to use an s3:// prefix
    assert [f.severity for f in found] == ["blocking"]
    assert "reaches no network" in found[0].message and "BAAI/bge-small-en-v1.5" in found[0].message
    assert found[0].fix.startswith("give the model as an s3:// prefix")


def test_network_isolation_with_an_s3_prefix_passes_the_source_check() -> None:
    spec = parse_spec(
        {
            "name": "iso",
            "model": {"source": "s3://bucket/models/bge/"},
            "hosting": {"mode": "vllm", "instance_type_fallbacks": [GPU], "network_isolation": True},
        }
    )
    assert [f for f in run_checks(build_context(spec)).findings if f.id == "model-source"] == []


def test_tag_characters_follow_botocores_tag_pattern() -> None:
    # botocore's TagValue pattern, whose classes this check follows
    assert SAGEMAKER.shape_for("TagValue").metadata["pattern"] == "([\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*)"
    # Accepted: letters (any script), digits, spaces and _ . : / = + - @
    tags = {"team": "ML ops/é-1", "cost:center": "a_b.c=d+e@f"}
    assert parse_spec({"name": "tags", "tags": tags}).tags == tags
    # Refused, naming the characters: what CreateEndpoint would answer with a ValidationException
    for bad in ("a,b", "x#y", "quote'd", "new\nline"):
        with pytest.raises(SpecInvalid, match=re.escape("SageMaker's tag pattern refuses")):
            parse_spec({"name": "tags", "tags": {"team": bad}})
