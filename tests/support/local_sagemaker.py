"""Helpers for the local SageMaker tests: artifacts into (moto) S3, deploy calls, deadline polling."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from botocore.config import Config

from workflows.artifact.tarball import write_tarball
from workflows.local.engine import BUCKET, REGION, LocalEngine

ROLE = "arn:aws:iam::123456789012:role/deploybench-local"
HF_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-inference:2.6.0-transformers4.51.3-cpu-py312-ubuntu22.04"
VLLM_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/vllm:0.26.0-gpu-py312-cu128-ubuntu22.04-sagemaker"
ONE_TEXT = b'{"inputs": ["a short text"]}'


def upload_artifact(engine: LocalEngine, folder: Path, key: str, tmp_path: Path) -> str:
    """Tar ``folder`` as pack does and put it in the engine's bucket; returns its s3:// URI."""
    tarball = tmp_path / f"{key.replace('/', '-')}.tar.gz"
    write_tarball(folder, tarball, "fast")
    engine.client("s3").upload_file(str(tarball), BUCKET, key)
    return f"s3://{BUCKET}/{key}"


def container(uri: str, image: str = HF_IMAGE, **environment: str) -> dict[str, Any]:
    return {
        "Image": image,
        "ModelDataUrl": uri,
        "Environment": {"SAGEMAKER_MODEL_SERVER_WORKERS": "1", "ORT_INTRA_OP_THREADS": "1", **environment},
    }


def deploy(
    sagemaker: Any,
    name: str,
    model: dict[str, Any],
    *,
    instance_type: str = "ml.c6i.xlarge",
    **variant: Any,
) -> None:
    """Model, endpoint config and endpoint, all called ``name``."""
    sagemaker.create_model(ModelName=name, ExecutionRoleArn=ROLE, **model)
    production: dict[str, Any] = {"VariantName": "primary", "ModelName": name, **variant}
    if "ServerlessConfig" not in variant:
        production = {"InstanceType": instance_type, "InitialInstanceCount": 1, **production}
    sagemaker.create_endpoint_config(EndpointConfigName=name, ProductionVariants=[production])
    sagemaker.create_endpoint(EndpointName=name, EndpointConfigName=name)


def components_endpoint(
    sagemaker: Any,
    name: str,
    model_uri: str,
    *,
    instance_type: str = "ml.c6i.xlarge",
    min_instances: int = 0,
    **variant: Any,
) -> None:
    """Model ``m``, and an InService endpoint ``name`` for inference components (no model in its config)."""
    sagemaker.create_model(ModelName="m", ExecutionRoleArn=ROLE, PrimaryContainer=container(model_uri))
    scaling = {"Status": "ENABLED", "MinInstanceCount": min_instances, "MaxInstanceCount": 1}
    sagemaker.create_endpoint_config(
        EndpointConfigName=name,
        ExecutionRoleArn=ROLE,
        ProductionVariants=[
            {
                "VariantName": "primary",
                "InstanceType": instance_type,
                "InitialInstanceCount": 1,
                "ManagedInstanceScaling": scaling,
                **variant,
            }
        ],
    )
    sagemaker.create_endpoint(EndpointName=name, EndpointConfigName=name)
    assert endpoint_settled(sagemaker, name)[-1]["EndpointStatus"] == "InService"


def wait_for(
    probe: Callable[[], dict[str, Any]], done: Callable[[dict[str, Any]], bool], *, timeout_s: float = 300
) -> list[dict[str, Any]]:
    """Poll ``probe`` until ``done``; returns every answer seen. Fails past the deadline."""
    seen = []
    deadline = time.monotonic() + timeout_s
    while True:
        answer = probe()
        seen.append(answer)
        if done(answer):
            return seen
        assert time.monotonic() < deadline, f"still waiting after {timeout_s} s; last answer: {answer}"
        time.sleep(0.2)


def endpoint_settled(sagemaker: Any, name: str, timeout_s: float = 300) -> list[dict[str, Any]]:
    return wait_for(
        lambda: sagemaker.describe_endpoint(EndpointName=name),
        lambda d: d["EndpointStatus"] != "Creating",
        timeout_s=timeout_s,
    )


def runtime(engine: LocalEngine, read_timeout: float = 120) -> Any:
    """A runtime client that does not retry (a retried timeout would hide the first answer)."""
    import boto3

    return boto3.client(
        "sagemaker-runtime",
        region_name=REGION,
        config=Config(read_timeout=read_timeout, retries={"total_max_attempts": 1, "mode": "standard"}),
    )


def log_text(engine: LocalEngine, group: str) -> str:
    """Every event of every stream of a CloudWatch log group, as one text ("" before the group exists)."""
    logs = engine.client("logs")
    lines = []
    try:
        streams = logs.describe_log_streams(logGroupName=group)["logStreams"]
    except logs.exceptions.ResourceNotFoundException:
        return ""  # nothing shipped yet
    for stream in streams:
        events = logs.get_log_events(logGroupName=group, logStreamName=stream["logStreamName"])["events"]
        lines += [event["message"] for event in events]
    return "\n".join(lines)


def leftover_cgroups(engine: LocalEngine) -> list[Path]:
    """Memory-cap cgroups of this engine's local SageMaker still on the machine (none once it is over)."""
    from workflows.local.sagemaker.memory import tagged_caps

    assert engine.sagemaker is not None
    return tagged_caps(engine.sagemaker.cgroup_tag)
