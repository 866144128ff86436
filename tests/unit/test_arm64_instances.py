"""Graviton (and Grace) instance types: refused at preflight and when an image is chosen, with the reason."""

from __future__ import annotations

import botocore.session
import pytest

from workflows.errors import SpecInvalid
from workflows.hosting.image_choice import image_for
from workflows.hosting.modes import run_checks
from workflows.images.accelerators import is_arm64
from workflows.preflight import build_context
from workflows.spec.pipeline import parse_spec

ENDPOINT_TYPES = (
    botocore.session.get_session().get_service_model("sagemaker").shape_for("ProductionVariantInstanceType")
)


def test_the_arm64_families_of_botocores_enum_are_the_graviton_ones_and_grace() -> None:
    families = {t.split(".")[1] for t in ENDPOINT_TYPES.enum}
    arm = {f for f in families if is_arm64(f"ml.{f}.xlarge")}
    assert arm == {
        "c6g",
        "c6gd",
        "c6gn",
        "c7g",
        "c8g",
        "m6g",
        "m6gd",
        "m8g",
        "r6g",
        "r6gd",
        "r7gd",
        "r8g",
        "p6e-gb200",
    }
    # x86_64 and GPU families whose names hold a g are not among them
    assert not any(is_arm64(f"ml.{f}.xlarge") for f in ("g4dn", "g5", "g6e", "c7i", "c7i-flex", "inf2"))


@pytest.mark.parametrize(
    "instance_type", ["ml.c7g.xlarge", "ml.m6g.large", "ml.c6g.xlarge", "ml.r7gd.xlarge"]
)
def test_a_graviton_spec_is_blocked_at_preflight_naming_the_architecture(instance_type: str) -> None:
    # Given a real-time spec on a Graviton type
    spec = parse_spec({"name": "arm", "hosting": {"instance_type_fallbacks": [instance_type]}})
    # When preflight runs
    findings = [f for f in run_checks(build_context(spec)).findings if f.id == "instance-type"]
    # Then it is blocked: the images and the wheel are x86_64
    assert [f.severity for f in findings] == ["blocking"]
    assert "arm64 CPU" in findings[0].message and "exec format error" in findings[0].message
    # And the image choice refuses it too (deploy never creates an x86 container there)
    with pytest.raises(SpecInvalid, match="arm64 CPU"):
        image_for("huggingface-pytorch-inference", spec.hosting, instance_type, "us-east-1")  # type: ignore[arg-type]


def test_ml_m7g_is_refused_when_the_spec_is_read_as_botocore_does_not_list_it() -> None:
    with pytest.raises(SpecInvalid, match="not accepted by SageMaker for endpoints"):
        parse_spec({"name": "arm", "hosting": {"instance_type_fallbacks": ["ml.m7g.large"]}})
