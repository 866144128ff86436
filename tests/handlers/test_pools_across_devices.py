"""Instance pools across CPU and GPU types: the preflight passes a real-time spec and refuses what
pools cannot carry; the deploy creates one Model per device and a ModelNameOverride on each pool of
the other device, a shape botocore's model accepts."""

from __future__ import annotations

from typing import Any

import pytest

from tests.handlers.test_instance_pools import deployed_variant, validate
from tests.support.hosting import ARTIFACT, CPU_IMAGE, GPU_IMAGE, PACK, request
from workflows.contracts import PackedDevice
from workflows.conversion.devices import device_precision, device_spec
from workflows.errors import SpecInvalid
from workflows.hosting.modes import run_checks
from workflows.hosting.pool_devices import run_devices
from workflows.preflight.context import PreflightContext

MIXED = ["ml.g5.xlarge", "ml.c6i.xlarge"]
ARN = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/db-run-1-a1"
CPU_ARTIFACT = "s3://bench-bucket/artifacts/run-1/cpu/model.tar.gz"
CPU_PACKED = PackedDevice(
    device="cpu",
    model_data_uri=CPU_ARTIFACT,
    size_bytes=2,
    sha256="cd" * 32,
    onnx_file="model.onnx",
    precision="fp32",
)
BOTH = PACK.model_copy(update={"device_artifacts": [CPU_PACKED]})


def pool_findings(hosting: dict[str, Any], region: str = "us-east-1") -> list[Any]:
    spec = request(hosting).spec
    return [f for f in run_checks(PreflightContext(spec, region=region)).findings if f.id == "F06"]


def test_the_issue_spec_passes_the_preflight_and_converts_for_both_devices() -> None:
    # Given the spec a new user writes: a GPU type first, a CPU type as the fallback, pools
    hosting = {"mode": "realtime", "capacity": "pools", "instance_type_fallbacks": MIXED}
    # When the spec's checks run, Then no pool finding blocks
    assert pool_findings(hosting) == []
    # And the run converts for the GPU (the first type's) and the CPU
    spec = request(hosting).spec
    assert run_devices(spec) == ["gpu", "cpu"]
    # And each device's artifact is converted from the spec narrowed to its types and precision
    gpu, cpu = device_spec(spec, "gpu", several=True), device_spec(spec, "cpu", several=True)
    assert (gpu.hosting.instance_type_fallbacks, gpu.convert.precision) == (["ml.g5.xlarge"], "fp16")  # type: ignore[union-attr]
    assert (cpu.hosting.instance_type_fallbacks, cpu.convert.precision) == (["ml.c6i.xlarge"], "fp32")  # type: ignore[union-attr]
    assert device_precision("cpu", "int8") == "int8"
    # And one device's pools, or recreate, convert once
    assert run_devices(request({"instance_type_fallbacks": ["ml.g6.xlarge", "ml.g5.xlarge"]}).spec) == ["gpu"]
    assert run_devices(request({**hosting, "capacity": "recreate"}).spec) == ["gpu"]


SIX_CPU_TYPES = [
    f"ml.c6i.{size}" for size in ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge")
]


@pytest.mark.parametrize(
    ("types", "region", "expected"),
    [
        (SIX_CPU_TYPES, "us-east-1", "lists 6 types; SageMaker takes at most 5"),
        (
            ["ml.g5.xlarge", "ml.inf2.xlarge"],
            "us-east-1",
            "pools ml.inf2.xlarge (neuron), a device deploybench converts no artifact for",
        ),  # fmt: skip
        (
            MIXED,
            "ap-southeast-5",
            "pool 1 (ml.g5.xlarge, gpu) of hosting.instance_type_fallbacks has no GPU image in region ap-southeast-5",
        ),  # fmt: skip
    ],
)
def test_bad_pools_block_naming_the_field(types: list[str], region: str, expected: str) -> None:
    # Given pools SageMaker or the artifacts cannot serve
    findings = pool_findings({"instance_type_fallbacks": types}, region=region)
    # Then a blocking F06 finding says what, and names the field (and the region where it matters)
    [finding] = [f for f in findings if expected in f.message]
    assert finding.severity == "blocking"
    assert "hosting.instance_type_fallbacks" in finding.message + finding.fix
    if region != "us-east-1":
        assert region in finding.message and finding.evidence == f"region {region}"


def test_a_type_twice_is_refused_with_the_spec_naming_the_field() -> None:
    # Given a pool list that names a type twice, Then the spec itself is refused, naming the field
    with pytest.raises(
        SpecInvalid, match=r"hosting.instance_type_fallbacks: instance types repeat \(ml.g5.xlarge\)"
    ):
        request({"instance_type_fallbacks": ["ml.g5.xlarge", "ml.c6i.xlarge", "ml.g5.xlarge"]})


def test_the_deploy_creates_a_model_per_device_and_overrides_the_cpu_pool() -> None:
    # Given the packed GPU artifact and the CPU artifact beside it
    models: list[dict[str, Any]] = []
    # When the deploy runs
    sent, result = deployed_variant({"instance_type_fallbacks": MIXED}, pack=BOTH, created=models)
    # Then one Model per device: the GPU artifact on the GPU image, the CPU artifact on the CPU image
    assert [(m["ModelName"], m["PrimaryContainer"]["ModelDataUrl"], m["PrimaryContainer"]["Image"]) for m in models] == [
        ("db-run-1-a1-m0", ARTIFACT, GPU_IMAGE),
        ("db-run-1-a1-m1", CPU_ARTIFACT, CPU_IMAGE),
    ]  # fmt: skip
    # And the endpoint config carries two pools, the CPU one naming its own model
    assert sent["ModelName"] == "db-run-1-a1-m0" and "InstanceType" not in sent
    assert sent["InstancePools"] == [
        {"InstanceType": "ml.g5.xlarge", "Priority": 1},
        {"InstanceType": "ml.c6i.xlarge", "Priority": 2, "ModelNameOverride": "db-run-1-a1-m1"},
    ]
    validate(sent)
    # And the result lists both models, so teardown and the janitor find them, and which serves which
    assert result.model_names == ["db-run-1-a1-m0", "db-run-1-a1-m1"]
    assert result.device_models == {"gpu": "db-run-1-a1-m0", "cpu": "db-run-1-a1-m1"}
    assert result.instance_pools == MIXED


def test_the_last_type_alone_is_served_by_its_own_device_model() -> None:
    # Given a later attempt left with the CPU type only (the GPU pool was exhausted)
    models: list[dict[str, Any]] = []
    sent, _ = deployed_variant(
        {"instance_type_fallbacks": MIXED}, pack=BOTH, created=models, stubbed_models=1, attempt=2, index=1
    )
    # Then its one InstanceType runs the CPU artifact, as the attempt's only model
    assert (sent["InstanceType"], sent["ModelName"]) == ("ml.c6i.xlarge", "db-run-1-a2-m0")
    assert [(m["ModelName"], m["PrimaryContainer"]["ModelDataUrl"]) for m in models] == [
        ("db-run-1-a2-m0", CPU_ARTIFACT)
    ]
