"""GPU partitions on the local SageMaker: each copy on a partition is a copy on the CPU stand-in,
labelled as such, and components are held to the partitioned endpoint's rules (light server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.support.local_sagemaker import (
    ONE_TEXT,
    components_endpoint,
    log_text,
    runtime,
    upload_artifact,
    wait_for,
)
from workflows.local.engine import LocalEngine

LAYOUT = [{"AcceleratorPartitionTypes": ["mig-1g.10gb"] * 7}]


def requirements(**extra: Any) -> dict[str, Any]:
    return {"MinMemoryRequiredInMb": 1024, "NumberOfAcceleratorDevicesRequired": 1, **extra}


def test_copies_on_partitions_serve_on_the_stand_in_and_say_so(
    engine: LocalEngine, tiny_artifact: Path, tmp_path: Path
) -> None:
    uri = upload_artifact(engine, tiny_artifact, "models/tiny/model.tar.gz", tmp_path)
    sagemaker = engine.client("sagemaker")
    # Given an ml.p5.48xlarge endpoint whose variant carves seven mig-1g.10gb partitions per GPU
    components_endpoint(
        sagemaker,
        "ep-mig",
        uri,
        instance_type="ml.p5.48xlarge",
        min_instances=1,
        AcceleratorPartitionLayouts=LAYOUT,
    )

    def create(name: str, compute: dict[str, Any], copies: int = 1) -> None:
        sagemaker.create_inference_component(
            InferenceComponentName=name,
            EndpointName="ep-mig",
            VariantName="primary",
            Specification={"ModelName": "m", "ComputeResourceRequirements": compute},
            RuntimeConfig={"CopyCount": copies},
        )

    # When a component names no partition type, or one the layout does not declare, it is refused
    for compute, says in (
        (requirements(), "AcceleratorPartitionType is required"),
        (requirements(AcceleratorPartitionType="mig-2g.20gb"), "declared types: mig-1g.10gb"),
        (
            {**requirements(AcceleratorPartitionType="mig-1g.10gb"), "NumberOfAcceleratorDevicesRequired": 2},
            "must be 1",
        ),
    ):
        with pytest.raises(ClientError) as refused:
            create("ic-bad", compute)
        assert says in refused.value.response["Error"]["Message"]
    # When two copies ask for one mig-1g.10gb partition each
    create("ic-mig", requirements(AcceleratorPartitionType="mig-1g.10gb"), copies=2)
    described = wait_for(
        lambda: dict(sagemaker.describe_inference_component(InferenceComponentName="ic-mig")),
        lambda d: d["InferenceComponentStatus"] != "Creating",
    )[-1]
    # Then both serve, and each copy's log says it stands in for a partition on the CPU
    assert described["RuntimeConfig"] == {"DesiredCopyCount": 2, "CurrentCopyCount": 2}
    answer = runtime(engine).invoke_endpoint(
        EndpointName="ep-mig", Body=ONE_TEXT, ContentType="application/json", InferenceComponentName="ic-mig"
    )
    assert "embeddings" in json.loads(answer["Body"].read())
    text = wait_for(
        lambda: {"text": log_text(engine, "/aws/sagemaker/InferenceComponents/ic-mig")},
        lambda d: d["text"].count("stands in for one mig-1g.10gb GPU partition") == 2,
        timeout_s=30,
    )[-1]["text"]
    assert "a copy on the CPU stand-in, not a slice of a GPU" in text
    sagemaker.delete_inference_component(InferenceComponentName="ic-mig")
    wait_for(
        lambda: {"left": sagemaker.list_inference_components()["InferenceComponents"]},
        lambda d: not d["left"],
        timeout_s=60,
    )
    sagemaker.delete_endpoint(EndpointName="ep-mig")
