"""Shared by diagnosis tests: an endpoint on moto, its CloudWatch log lines, a rule table entry."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from workflows import clock
from workflows.contracts import (
    DeployResult,
)
from workflows.diagnosis.collect import log_group

ROLE = "arn:aws:iam::123456789012:role/sm"


def create_endpoint(sagemaker: Any, name: str) -> DeployResult:
    sagemaker.create_model(ModelName=f"{name}-m0", PrimaryContainer={"Image": "img"}, ExecutionRoleArn=ROLE)
    sagemaker.create_endpoint_config(
        EndpointConfigName=name,
        ProductionVariants=[
            {
                "VariantName": "primary",
                "ModelName": f"{name}-m0",
                "InstanceType": "ml.c5.xlarge",
                "InitialInstanceCount": 1,
            }
        ],
    )
    sagemaker.create_endpoint(EndpointName=name, EndpointConfigName=name)
    return DeployResult(
        endpoint_name=name,
        endpoint_config_name=name,
        model_names=[f"{name}-m0"],
        instance_type="ml.c5.xlarge",
        created_at=clock.now() - timedelta(minutes=5),
    )


def write_logs(logs: Any, endpoint: str, lines: list[str]) -> None:
    group = log_group(endpoint)
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName="primary/i-0a1b2c3d")
    now = int(time.time() * 1000)
    logs.put_log_events(
        logGroupName=group,
        logStreamName="primary/i-0a1b2c3d",
        logEvents=[{"timestamp": now + i, "message": line} for i, line in enumerate(lines)],
    )


def rule(**overrides: Any) -> dict[str, Any]:
    """One valid rule of a diagnosis rule table (F99, a pattern signature), with ``overrides``."""
    base = {
        "id": "F99",
        "name": "test-entry",
        "title": "a test entry",
        "action": "fail",
        "fix": "none",
        "signatures": [{"pattern": "boom", "confidence": 0.9}],
    }
    return {**base, **overrides}
