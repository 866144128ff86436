"""Which instance families carry CUDA GPUs, Neuron or Gaudi accelerators (defect: inf2/trn1 were GPUs)."""

from __future__ import annotations

import re

import botocore.session
import pytest

from workflows.images.accelerators import accelerator_kind, device_of, instance_table, is_gpu_instance
from workflows.preflight.instances import check_instance_types
from workflows.spec.pipeline import parse_spec


def hosting_families() -> set[str]:
    model = botocore.session.get_session().get_service_model("sagemaker")
    return {name.split(".")[1] for name in model.shape_for("ProductionVariantInstanceType").enum}


def test_every_accelerator_family_sagemaker_hosts_is_classified_and_no_other() -> None:
    # Given botocore's ProductionVariantInstanceType enum: g, p (NVIDIA), inf, trn (Neuron), dl (Gaudi)
    accelerated = {f for f in hosting_families() if re.match(r"^(g|p|inf|trn|dl)\d", f)}
    classified = {f for f, row in instance_table()["families"].items() if row.get("accelerator")}
    # Then the table classifies exactly those families
    assert accelerated == classified
    assert {"p5en", "p6-b200", "g6e", "g7e", "trn2"} <= classified


@pytest.mark.parametrize(
    ("instance_type", "device"),
    [
        ("ml.g5.xlarge", "gpu"),
        ("ml.p5en.48xlarge", "gpu"),
        ("ml.p6-b200.48xlarge", "gpu"),
        ("ml.inf1.xlarge", "neuron"),
        ("ml.inf2.xlarge", "neuron"),
        ("ml.trn1.2xlarge", "neuron"),
        ("ml.trn2.48xlarge", "neuron"),
        ("ml.dl1.24xlarge", "gaudi"),
        ("ml.c6i.xlarge", "cpu"),
    ],
)
def test_neuron_and_gaudi_are_not_cuda_gpus(instance_type: str, device: str) -> None:
    assert device_of(instance_type) == device
    assert is_gpu_instance(instance_type) == (device == "gpu")
    assert (accelerator_kind(instance_type) is None) == (device == "cpu")


def test_a_neuron_instance_blocks_the_preflight_unless_the_spec_names_its_image() -> None:
    [blocking] = check_instance_types(["ml.inf2.xlarge"])
    assert blocking.severity == "blocking" and "not CUDA GPUs" in blocking.message
    [fallback] = check_instance_types(["ml.g5.xlarge", "ml.trn1.2xlarge"])
    assert fallback.severity == "warning"
    assert check_instance_types(["ml.inf2.xlarge"], image="x.dkr.ecr.us-east-1.amazonaws.com/neuron:1") == []


def test_a_dashed_family_is_a_valid_instance_type_in_a_spec() -> None:
    spec = parse_spec(
        {
            "name": "p6",
            "model": {"source": "bundled"},
            "hosting": {"instance_type_fallbacks": ["ml.p6-b200.48xlarge"]},
        }
    )
    assert spec.hosting.instance_type_fallbacks == ["ml.p6-b200.48xlarge"]  # type: ignore[union-attr]
