"""Shared builders for the hosting-mode tests: requests, settings, strict stubbed clients."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import boto3
from botocore.stub import Stubber

from tests.conftest import fast_spec
from workflows.contracts import (
    DeployAttempt,
    DeployOverrides,
    DeployRequest,
    DeployResult,
    DescribeRequest,
    PackResult,
)
from workflows.settings import Settings
from workflows.spec.pipeline import RunSpec, parse_spec

ROLE = "arn:aws:iam::123456789012:role/deploybench-sagemaker"
BUCKET = "bench-bucket"
SETTINGS = Settings(bucket=BUCKET, sagemaker_role_arn=ROLE, region="us-east-1")
ARTIFACT = f"s3://{BUCKET}/artifacts/run-1/model.tar.gz"
PACK = PackResult(
    model_data_uri=ARTIFACT, size_bytes=1, sha256="ab" * 32, compression="gzip-isal-1", seconds=0.1
)
CPU_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-inference:2.6.0-transformers5.5.3-cpu-py312-ubuntu22.04"
GPU_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-inference:2.6.0-transformers5.5.3-gpu-py312-cu124-ubuntu22.04"


def spec_with(source: str, hosting: dict[str, Any], **overrides: Any) -> RunSpec:
    """``fast_spec`` with exactly this hosting section (no default instance types: serverless has none)."""
    data = fast_spec(source, **overrides).model_dump(mode="json")
    data["hosting"] = hosting
    return parse_spec(data)


def request(hosting: dict[str, Any], *, source: str = "bundled", attempt: int = 1, index: int = 0,
            overrides: DeployOverrides | None = None, **spec: Any) -> DeployRequest:  # fmt: skip
    """A deploy request for run ``run-1`` with the given hosting section."""
    return DeployRequest(
        run_id="run-1",
        spec=spec_with(source, hosting, **spec),
        pack=PACK,
        attempt=DeployAttempt(
            number=attempt, instance_type_index=index, overrides=overrides or DeployOverrides()
        ),
    )


def describe_request(deploy_request: DeployRequest, result: DeployResult) -> DescribeRequest:
    return DescribeRequest(run_id=deploy_request.run_id, spec=deploy_request.spec, deploy=result)


def client(service: str) -> Any:
    return boto3.client(service, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


@contextmanager
def stubbed(service: str) -> Iterator[tuple[Any, Stubber]]:
    """A client whose every call must be one the test queued, with exactly those parameters."""
    real = client(service)
    with Stubber(real) as stub:
        yield real, stub
        stub.assert_no_pending_responses()


TAGS = [
    {"Key": "deploybench:managed", "Value": "true"},
    {"Key": "deploybench:run-id", "Value": "run-1"},
    {"Key": "deploybench:spec", "Value": "path-test"},
]


def tags_match(tags: list[dict[str, str]]) -> bool:
    """The run's tags (the expiry is computed from the clock, so checked by key only)."""
    keys = {t["Key"]: t["Value"] for t in tags}
    return all(keys.get(t["Key"]) == t["Value"] for t in TAGS) and "deploybench:expires-at" in keys


NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
