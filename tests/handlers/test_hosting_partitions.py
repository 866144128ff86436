"""GPU partitions for inference components: the endpoint config's layout and each component's
partition type, as botocore's model takes them (the Stubber validates every request against
botocore's sagemaker model), and the refusals before any call."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.stub import ANY
from typer.testing import CliRunner

from tests.conftest import ROOT
from tests.handlers.test_hosting_components import (
    IC0,
    deploy_components,
    expect_component,
    not_found,
)
from tests.support.hosting import NOW, SETTINGS, describe_request, request, stubbed
from workflows import clock
from workflows.cli.app import app
from workflows.errors import PreflightBlocked, SpecInvalid
from workflows.steps.deploy_endpoint import deploy
from workflows.steps.place_inference_components import place_inference_components

runner = CliRunner()
PARTITIONED = {
    "mode": "inference-component",
    "instance_type_fallbacks": ["ml.p5.48xlarge"],
    "gpu_partition": "mig-1g.10gb",
    "copies": 14,
}


def deploy_partitioned(hosting: dict[str, Any], layout: list[str]) -> tuple[Any, Any]:
    fields = {k: v for k, v in {**PARTITIONED, **hosting}.items() if k != "mode"}
    return deploy_components(
        fields, variant={"AcceleratorPartitionLayouts": [{"AcceleratorPartitionTypes": layout}]}
    )


def test_a_partitioned_variant_carries_one_layout_of_as_many_partitions_as_fit_one_gpu() -> None:
    # Given mig-1g.10gb on ml.p5.48xlarge (H100 80GB: 7 of them fit one GPU) and no count
    # Then the variant's one layout repeats the type 7 times (validated against botocore's model)
    _, result = deploy_partitioned({}, ["mig-1g.10gb"] * 7)
    assert result.inference_components == [IC0]


def test_a_named_count_per_gpu_is_the_layout() -> None:
    deploy_partitioned({"partitions_per_gpu": 3}, ["mig-1g.10gb"] * 3)


def test_each_component_copy_asks_for_one_partition_of_the_type(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clock, "now", lambda: NOW + timedelta(minutes=5))
    req, result = deploy_partitioned({}, ["mig-1g.10gb"] * 7)
    poll = describe_request(req, result.model_copy(update={"created_at": NOW}))
    with stubbed("sagemaker") as (sagemaker, stub):
        not_found(stub, IC0)
        expect_component(
            stub,
            {
                "MinMemoryRequiredInMb": ANY,
                "NumberOfAcceleratorDevicesRequired": 1,
                "AcceleratorPartitionType": "mig-1g.10gb",
            },
            ANY,
            copies=14,
        )
        place_inference_components(poll, sagemaker=sagemaker)
        stub.assert_no_pending_responses()


@pytest.mark.parametrize(
    ("hosting", "says"),
    [
        # A GPU without MIG: the refusal names the families and types that have one
        (
            {"instance_type_fallbacks": ["ml.g5.xlarge"]},
            "ml.g5.xlarge (NVIDIA A10G) offers no GPU partitions",
        ),
        ({"instance_type_fallbacks": ["ml.g5.xlarge"]}, "ml.p5.* (NVIDIA H100 80GB): mig-1g.10gb"),
        # A type of another family
        ({"gpu_partition": "mig-1g.5gb"}, "for ml.p5 are mig-1g.10gb, mig-1g.20gb, mig-2g.20gb"),
        # A layout that does not fit one GPU
        ({"gpu_partition": "mig-3g.40gb", "partitions_per_gpu": 3, "copies": 1}, "at most 2 fit"),
    ],
)
def test_a_layout_sagemaker_would_refuse_is_refused_before_any_call(
    hosting: dict[str, Any], says: str
) -> None:
    req = request({**PARTITIONED, **hosting})
    with stubbed("sagemaker") as (sagemaker, _), pytest.raises(PreflightBlocked) as refused:
        deploy(req, sagemaker=sagemaker, settings=SETTINGS)
    assert says in str(refused.value)


@pytest.mark.parametrize(
    ("hosting", "says"),
    [
        (
            {"gpu_partition": "mig-1g.10gb", "accelerator_devices": 2},
            "a copy on a partition takes exactly one",
        ),
        ({"gpu_partition": None, "partitions_per_gpu": 2}, "partitions_per_gpu needs gpu_partition"),
        ({"gpu_partition": "1g.10gb"}, "String should match pattern"),
    ],
)
def test_a_spec_that_cannot_be_a_partition_is_refused_naming_the_field(
    hosting: dict[str, Any], says: str
) -> None:
    with pytest.raises(SpecInvalid, match=says):
        request({**PARTITIONED, **hosting})


def test_the_partitioned_example_passes_preflight_and_on_g5_is_refused_with_the_choices(
    tmp_path: Path,
) -> None:
    # Given the annotated example on ml.p5.48xlarge
    example = ROOT / "examples" / "partitions-mig.yaml"
    passed = runner.invoke(app, ["preflight", "--json", str(example)])
    # Then nothing blocks
    assert passed.exit_code == 0, passed.output
    assert [f for f in json.loads(passed.output)["findings"] if f["severity"] == "blocking"] == []
    # When the same spec names ml.g5.xlarge
    on_g5 = tmp_path / "g5.yaml"
    on_g5.write_text(example.read_text().replace("[ml.p5.48xlarge]", "[ml.g5.xlarge]"))
    refused = runner.invoke(app, ["preflight", "--json", str(on_g5)])
    # Then it is refused, naming the types each MIG family offers
    blocking = [f for f in json.loads(refused.output)["findings"] if f["severity"] == "blocking"]
    assert refused.exit_code != 0
    assert any(
        f["id"] == "gpu-partition" and "ml.p4d.* (NVIDIA A100 40GB): mig-1g.5gb" in f["message"]
        for f in blocking
    ), blocking
