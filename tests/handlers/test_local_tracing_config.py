"""The local SageMaker takes TracingConfig as SageMaker does: kept on the config, refused beside what SageMaker
refuses it with (a serverless variant, data capture)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tests.support.hosting import CPU_IMAGE, ROLE
from workflows.local.sagemaker.api import ApiError
from workflows.local.sagemaker.backend import LocalSageMaker

TRACING = {"EnableTracing": True, "InitialSamplingPercentage": 5}
INSTANCES = {
    "VariantName": "primary",
    "ModelName": "m",
    "InstanceType": "ml.c6i.xlarge",
    "InitialInstanceCount": 1,
}
SERVERLESS = {
    "VariantName": "primary",
    "ModelName": "m",
    "ServerlessConfig": {"MemorySizeInMB": 2048, "MaxConcurrency": 1},
}


@pytest.fixture
def sagemaker() -> Iterator[LocalSageMaker]:
    with mock_aws():
        local = LocalSageMaker(region="us-east-1", s3=boto3.client("s3", region_name="us-east-1"))
        local.create_model(
            {"ModelName": "m", "ExecutionRoleArn": ROLE, "PrimaryContainer": {"Image": CPU_IMAGE}}
        )
        yield local
        local.shutdown()


def test_a_traced_config_on_instances_is_kept_with_its_tracing(sagemaker: LocalSageMaker) -> None:
    sagemaker.create_endpoint_config(
        {"EndpointConfigName": "c", "ProductionVariants": [INSTANCES], "TracingConfig": TRACING}
    )
    assert sagemaker.describe_endpoint_config({"EndpointConfigName": "c"})["TracingConfig"] == TRACING


@pytest.mark.parametrize(
    ("variant", "extra", "named"),
    [
        (SERVERLESS, {}, "serverless variant"),
        (INSTANCES, {"DataCaptureConfig": {"InitialSamplingPercentage": 5}}, "DataCaptureConfig"),
    ],
)
def test_tracing_beside_a_serverless_variant_or_data_capture_is_refused(
    sagemaker: LocalSageMaker, variant: dict[str, Any], extra: dict[str, Any], named: str
) -> None:
    body = {"EndpointConfigName": "c", "ProductionVariants": [variant], "TracingConfig": TRACING, **extra}
    with pytest.raises(ApiError, match=named):
        sagemaker.create_endpoint_config(body)
