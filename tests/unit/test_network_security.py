"""VPC, network isolation and KMS: the spec fields, their refusals, and the request fields they become,
checked against botocore's SageMaker service model (shapes, required members, id patterns)."""

from __future__ import annotations

import re
from typing import Any

import botocore.session
import pytest
from botocore.stub import ANY

from tests.support.hosting import SETTINGS, request, stubbed
from workflows import clock
from workflows.benchmark.job import processing_job_request
from workflows.contracts import BenchmarkJobRequest, BenchmarkPlan, DeployResult
from workflows.errors import SpecInvalid
from workflows.hosting.base import AwsClients
from workflows.hosting.modes import strategy_for
from workflows.hosting.network import LOCAL_STORAGE_FAMILIES
from workflows.spec.pipeline import parse_spec

SUBNETS = ["subnet-0123456789abcdef0", "subnet-0fedcba9876543210"]
GROUPS = ["sg-0123456789abcdef0"]
KEY = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
VPC = {"subnets": SUBNETS, "security_groups": GROUPS}
ARN = "arn:aws:sagemaker:us-east-1:123456789012:model/db-run-1-a1-m0"
METRICS = {
    "MetricsConfig": {
        "EnableEnhancedMetrics": True,
        "EnableDetailedObservability": True,
        "MetricPublishFrequencyInSeconds": 10,
    }
}
"""Every real-time endpoint config publishes enhanced utilisation every 10 s."""
MODEL = botocore.session.get_session().get_service_model("sagemaker")


def pattern_violations(params: dict[str, Any], shape: Any, path: str = "") -> list[str]:
    """Every string in ``params`` that botocore's ``pattern`` (or ``max``) for its shape refuses."""
    found: list[str] = []
    if shape.type_name == "structure":
        for name, value in params.items():
            found += pattern_violations(value, shape.members[name], f"{path}.{name}")
    elif shape.type_name == "list":
        for index, value in enumerate(params):
            found += pattern_violations(value, shape.member, f"{path}[{index}]")
    elif shape.type_name == "string":
        pattern, most = shape.metadata.get("pattern"), shape.metadata.get("max")
        try:
            refused = bool(pattern) and not re.fullmatch(pattern, params)
        except re.error:
            # Java-only classes (\p{...}) in names and URIs; the id and key shapes compile in Python.
            refused = False
        if refused or (most is not None and len(params) > most):
            found.append(f"{path}={params!r}")
    return found


def conforms(operation: str, params: dict[str, Any]) -> list[str]:
    return pattern_violations(params, MODEL.operation_model(operation).input_shape)


def secured(**hosting: Any) -> dict[str, Any]:
    return {"vpc": VPC, "network_isolation": True, "kms_key_id": KEY, **hosting}


@pytest.mark.parametrize(
    ("hosting", "field", "says"),
    [
        (
            {"vpc": {"subnets": ["subnet-123"], "security_groups": GROUPS}},
            "hosting.vpc.subnets",
            "subnet-",
        ),
        (
            {"vpc": {"subnets": SUBNETS, "security_groups": ["group-1"]}},
            "security_groups",
            "sg-0123456789abcdef0",
        ),
        (
            {"vpc": {"subnets": SUBNETS[:1], "security_groups": GROUPS}, "instance_count": 2},
            "vpc",
            "two subnets",
        ),
        ({"kms_key_id": "my key"}, "kms_key_id", "alias/NAME"),
        ({"kms_key_id": KEY, "instance_type_fallbacks": ["ml.g5.xlarge"]}, "kms_key_id", "local NVMe"),
        ({"kms_key_id": KEY, "instance_type_fallbacks": ["ml.p5e.48xlarge"]}, "kms_key_id", "local NVMe"),
        ({"kms_key_id": KEY, "instance_type_fallbacks": ["ml.r7gd.xlarge"]}, "kms_key_id", "local NVMe"),
        ({"vpc": {"subnets": SUBNETS * 2, "security_groups": GROUPS}}, "subnets", "repeat"),
    ],
)
def test_bad_network_settings_are_refused_naming_the_field_and_the_fix(
    hosting: dict[str, Any], field: str, says: str
) -> None:
    # Given a spec whose VPC or key settings SageMaker would refuse (or that could never place two instances)
    data = {"name": "secure", "hosting": hosting}
    # When it is read, Then it is refused naming the field and what is accepted
    with pytest.raises(SpecInvalid) as refused:
        parse_spec(data)
    assert field in str(refused.value) and says in str(refused.value)


# SageMaker families without instance store (EBS only) in botocore's two instance-type enums. A family
# botocore adds fails the test below until it is classified here or in NVME_WITHOUT_D.
EBS_ONLY = {
    *[
        "c4",
        "c5",
        "c6g",
        "c6gn",
        "c6i",
        "c6in",
        "c7g",
        "c7i",
        "c7i-flex",
        "c8g",
        "c8i",
        "c8i-flex",
        "inf1",
        "inf2",
        "m4",
        "m5",
        "m6g",
        "m6i",
        "m7i",
    ],
    *[
        "m7i-flex",
        "m8g",
        "m8i",
        "m8i-flex",
        "p2",
        "p3",
        "r5",
        "r6g",
        "r6i",
        "r7i",
        "r8g",
        "r8i",
        "r8i-flex",
        "t2",
        "t3",
        "g7",
    ],
}


def test_local_storage_families_are_derived_from_botocores_instance_type_enums() -> None:
    families = {
        t.split(".")[1]
        for shape in ("ProductionVariantInstanceType", "ProcessingInstanceType")
        for t in MODEL.shape_for(shape).enum
    }
    # Then every SageMaker family is classified, and the derived set is exactly the rest
    assert families - EBS_ONLY == set(LOCAL_STORAGE_FAMILIES)
    # Among them those CreateEndpointConfig and CreateProcessingJob refuse a key for
    for family in [
        "c6gd",
        "m6gd",
        "r6gd",
        "r7gd",
        "p5e",
        "p5en",
        "p6-b200",
        "p6-b300",
        "p6e-gb200",
        "g7e",
        "dl1",
        "trn1",
        "trn1n",
        "trn2",
        "g5",
        "g4dn",
    ]:
        assert family in LOCAL_STORAGE_FAMILIES, family


def test_a_benchmark_job_key_on_a_local_storage_job_instance_is_refused() -> None:
    # Given a benchmark job on ml.g5.xlarge (local NVMe) with a customer key for its volume
    with pytest.raises(SpecInvalid) as refused:
        parse_spec(
            {"name": "secure", "benchmark": {"job_instance_type": "ml.g5.xlarge", "job_kms_key_id": KEY}}
        )
    # Then it is refused: CreateProcessingJob refuses VolumeKmsKeyId there
    assert "VolumeKmsKeyId" in str(refused.value) and "ml.c5.xlarge" in str(refused.value)
    # And on ml.c5.xlarge (EBS only) the key is taken
    assert (
        parse_spec({"name": "secure", "benchmark": {"job_kms_key_id": KEY}}).benchmark.job_kms_key_id == KEY
    )


def test_serverless_has_no_network_settings() -> None:
    # Given a serverless spec with a VPC (serverless endpoints take none)
    # When it is read, Then the field is refused
    with pytest.raises(SpecInvalid, match="vpc"):
        parse_spec({"name": "secure", "hosting": {"mode": "serverless", "vpc": VPC}})


def expect_create_model(stub: Any, **network: Any) -> None:
    """CreateModel as every mode sends it, plus ``network``'s fields (the stub refuses any other key)."""
    stub.add_response(
        "create_model",
        {"ModelArn": ARN},
        {"ModelName": ANY, "ExecutionRoleArn": ANY, "Tags": ANY, "PrimaryContainer": ANY, **network},
    )


def test_realtime_model_and_config_carry_vpc_isolation_and_key_in_botocore_shapes() -> None:
    # Given a real-time spec in a VPC, isolated, with a volume key, on two instances over two subnets
    deploy_request = request(secured(instance_count=2))
    with stubbed("sagemaker") as (sagemaker, stub):
        # Then CreateModel carries VpcConfig and EnableNetworkIsolation; CreateEndpointConfig the KmsKeyId
        expect_create_model(
            stub, VpcConfig={"SecurityGroupIds": GROUPS, "Subnets": SUBNETS}, EnableNetworkIsolation=True
        )
        stub.add_response(
            "create_endpoint_config",
            {"EndpointConfigArn": ARN},
            {"EndpointConfigName": ANY, "ProductionVariants": ANY, "Tags": ANY, "KmsKeyId": KEY, **METRICS},
        )
        stub.add_response(
            "create_endpoint",
            {"EndpointArn": ARN},
            {"EndpointName": ANY, "EndpointConfigName": ANY, "Tags": ANY},
        )
        calls: list[tuple[str, dict[str, Any]]] = []
        sagemaker.meta.events.register(
            "provide-client-params.sagemaker.*",
            lambda params, model, **_: calls.append((model.name, dict(params))),
        )
        # When it deploys (the stubbed client validates every request against botocore's model)
        strategy_for("realtime").deploy(
            deploy_request, clients=AwsClients(sagemaker=sagemaker), settings=SETTINGS
        )
    # And every id matches botocore's patterns
    assert [name for name, _ in calls] == ["CreateModel", "CreateEndpointConfig", "CreateEndpoint"]
    assert [violation for name, params in calls for violation in conforms(name, params)] == []
    assert conforms("CreateModel", {"VpcConfig": {"Subnets": ["subnet 1"], "SecurityGroupIds": GROUPS}})


def test_an_unsecured_spec_sends_none_of_the_fields() -> None:
    # Given a plain real-time spec
    with stubbed("sagemaker") as (sagemaker, stub):
        # Then no VpcConfig, EnableNetworkIsolation or KmsKeyId is sent (the stub refuses unexpected keys)
        expect_create_model(stub)
        stub.add_response(
            "create_endpoint_config",
            {"EndpointConfigArn": ARN},
            {"EndpointConfigName": ANY, "ProductionVariants": ANY, "Tags": ANY, **METRICS},
        )
        stub.add_response(
            "create_endpoint",
            {"EndpointArn": ARN},
            {"EndpointName": ANY, "EndpointConfigName": ANY, "Tags": ANY},
        )
        # When it deploys
        result = strategy_for("realtime").deploy(
            request({}), clients=AwsClients(sagemaker=sagemaker), settings=SETTINGS
        )
    assert result.model_names == ["db-run-1-a1-m0"]


def test_a_components_endpoint_config_carries_the_vpc_its_instances_run_in() -> None:
    # Given inference components in a VPC with isolation (the instances are the endpoint's own)
    deploy_request = request({"mode": "inference-component", **secured()})
    with stubbed("sagemaker") as (sagemaker, stub):
        expect_create_model(stub, VpcConfig=ANY, EnableNetworkIsolation=True)
        # Then the endpoint config carries VpcConfig, EnableNetworkIsolation and KmsKeyId with its role
        stub.add_response(
            "create_endpoint_config",
            {"EndpointConfigArn": ARN},
            {
                **METRICS,
                "EndpointConfigName": ANY,
                "ProductionVariants": ANY,
                "Tags": ANY,
                "ExecutionRoleArn": ANY,
                "KmsKeyId": KEY,
                "VpcConfig": {"SecurityGroupIds": GROUPS, "Subnets": SUBNETS},
                "EnableNetworkIsolation": True,
            },
        )
        stub.add_response(
            "create_endpoint",
            {"EndpointArn": ARN},
            {"EndpointName": ANY, "EndpointConfigName": ANY, "Tags": ANY},
        )
        # When it deploys
        result = strategy_for("inference-component").deploy(
            deploy_request, clients=AwsClients(sagemaker=sagemaker), settings=SETTINGS
        )
    assert result.endpoint_name == "db-run-1-a1"


def job_request(spec_data: dict[str, Any]) -> BenchmarkJobRequest:
    spec = parse_spec({"name": "secure", **spec_data})
    plan = BenchmarkPlan(
        runner="processing-job",
        reason="test",
        planned_s=60.0,
        job_name="db-run-j-bench",
        job_instance_type="ml.c5.xlarge",
    )
    deploy = DeployResult(
        endpoint_name="db-run-j-a1",
        endpoint_config_name="db-run-j-a1",
        model_names=["m"],
        instance_type="ml.c6i.xlarge",
        created_at=clock.now(),
    )
    return BenchmarkJobRequest(run_id="run-j", spec=spec, deploy=deploy, plan=plan)


def test_the_benchmark_job_runs_in_the_vpc_with_its_volume_and_output_keys() -> None:
    # Given a job VPC of its own and a job key
    job_vpc = {"subnets": SUBNETS[1:], "security_groups": GROUPS}
    params = processing_job_request(
        job_request({"hosting": {"vpc": VPC}, "benchmark": {"job_vpc": job_vpc, "job_kms_key_id": KEY}}),
        settings=SETTINGS,
    )
    # Then NetworkConfig.VpcConfig is the job's, and the volume and the outputs are encrypted with the key
    assert params["NetworkConfig"] == {"VpcConfig": {"SecurityGroupIds": GROUPS, "Subnets": SUBNETS[1:]}}
    assert params["ProcessingResources"]["ClusterConfig"]["VolumeKmsKeyId"] == KEY
    assert params["ProcessingOutputConfig"]["KmsKeyId"] == KEY
    # And the request conforms to botocore's CreateProcessingJob (required members, types, patterns)
    from botocore.validate import ParamValidator

    report = ParamValidator().validate(params, MODEL.operation_model("CreateProcessingJob").input_shape)
    assert not report.has_errors(), report.generate_report()
    assert conforms("CreateProcessingJob", params) == []


def test_the_benchmark_job_follows_the_hosting_vpc_when_it_has_none_of_its_own() -> None:
    # Given a hosting VPC and no job VPC
    params = processing_job_request(job_request({"hosting": {"vpc": VPC}}), settings=SETTINGS)
    # Then the job runs in the hosting's subnets (it must reach the endpoint) and has no key fields
    assert params["NetworkConfig"]["VpcConfig"]["Subnets"] == SUBNETS
    assert "VolumeKmsKeyId" not in params["ProcessingResources"]["ClusterConfig"]
    assert "KmsKeyId" not in params["ProcessingOutputConfig"]
