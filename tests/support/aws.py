"""The one moto account every AWS test runs in: its region, bucket, role and clients."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import boto3

REGION = "us-east-1"
ACCOUNT = "123456789012"
BUCKET = "bench-bucket"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/deploybench-sagemaker"
# Variables that would send SageMaker calls to the local SageMaker instead of moto.
LOCAL_ENDPOINT_ENV = ("AWS_ENDPOINT_URL_SAGEMAKER", "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME")


@dataclass
class Aws:
    """moto's account as a test sees it: clients are made on first use, in ``region``."""

    region: str = REGION
    bucket: str = BUCKET
    role: str = ROLE
    made: dict[str, Any] = field(default_factory=dict, repr=False)

    def client(self, service: str) -> Any:
        """One client per service for the test (moto keeps the state, not the client)."""
        if service not in self.made:
            self.made[service] = boto3.client(service, region_name=self.region)  # type: ignore[call-overload]
        return self.made[service]

    @cached_property
    def s3(self) -> Any:
        return self.client("s3")

    @cached_property
    def sagemaker(self) -> Any:
        return self.client("sagemaker")

    @cached_property
    def logs(self) -> Any:
        return self.client("logs")

    @cached_property
    def cloudwatch(self) -> Any:
        return self.client("cloudwatch")

    @cached_property
    def autoscaling(self) -> Any:
        return self.client("application-autoscaling")

    @cached_property
    def tagging(self) -> Any:
        return self.client("resourcegroupstaggingapi")

    @cached_property
    def sfn(self) -> Any:
        return self.client("stepfunctions")

    @cached_property
    def sns(self) -> Any:
        return self.client("sns")

    @cached_property
    def sqs(self) -> Any:
        return self.client("sqs")
