"""Triton: the model repository planned from the artifact, parsed with the real ModelConfig protobuf
(F19), file names per backend (F23), complete weights (F22), the minimum AMI for the image's CUDA
(F20), and the exact calls that deploy it from an uncompressed S3 prefix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from botocore.stub import ANY

from tests.support.aws import Aws
from tests.support.hosting import BUCKET, ROLE, SETTINGS, request, stubbed
from workflows.aws.storage import upload_folder
from workflows.contracts import ArtifactManifest
from workflows.conversion.manifest import read_manifest
from workflows.errors import ArtifactIncomplete, PreflightBlocked
from workflows.hosting import triton_repository as repo
from workflows.hosting.triton import ami_for
from workflows.preflight.triton import parse_config
from workflows.steps.deploy_endpoint import deploy

TRITON_GPU = "763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:26.05-py3"


def hosting(**fields: Any) -> Any:
    return request({"mode": "triton", "instance_type_fallbacks": ["ml.g5.xlarge"], **fields}).spec.hosting


def test_every_generated_config_parses_as_model_config_and_wires_the_ensemble(tiny_artifact: Path) -> None:
    manifest = read_manifest(tiny_artifact)
    # When the repository is planned for a GPU instance
    planned = repo.plan_repository(manifest, hosting(max_batch_size=16), gpu=True)
    configs = {p.path: parse_config(p.text or "") for p in planned if p.path.endswith("config.pbtxt")}
    # Then the real protobuf reads each config, with the graph's tensors and the backend's file
    model = configs["model/config.pbtxt"]
    assert model.backend == "onnxruntime" and model.max_batch_size == 16  # type: ignore[attr-defined]
    assert [i.name for i in model.input] == manifest.inputs  # type: ignore[attr-defined]
    assert [o.name for o in model.output] == manifest.outputs  # type: ignore[attr-defined]
    assert model.instance_group[0].kind == 1  # type: ignore[attr-defined]  # KIND_GPU
    ensemble = configs["ensemble/config.pbtxt"]
    steps = ensemble.ensemble_scheduling.step  # type: ignore[attr-defined]
    assert [s.model_name for s in steps] == ["tokenizer", "model"]
    assert dict(steps[1].input_map) == {name: name for name in manifest.inputs}
    assert {p.path for p in planned} >= {
        "model/1/model.onnx",
        "tokenizer/1/model.py",
        "tokenizer/1/tokenizer.json",
    }
    # And the plan passes its own checks
    assert repo.check_plan(planned) == []


def test_a_generator_joining_list_elements_without_commas_is_caught_as_f19(
    tiny_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the field's bug: list elements joined with "\n" instead of ",\n"
    monkeypatch.setattr(repo, "_tensors", lambda names, t, d: "\n".join(repo._tensor(n, t, d) for n in names))
    planned = repo.plan_repository(read_manifest(tiny_artifact), hosting(), gpu=False)
    # When the plan is checked, the protobuf parser reports the position as the server would
    findings = repo.check_plan(planned)
    assert {f.id for f in findings} == {"F19"}
    assert "model/config.pbtxt" in findings[0].message and 'Expected ","' in findings[0].message


def test_a_wrong_file_name_and_a_truncated_model_are_caught(tiny_artifact: Path) -> None:
    manifest = read_manifest(tiny_artifact)
    planned = repo.plan_repository(manifest, hosting(tokenizer_ensemble=False), gpu=False)
    # Given the ONNX file planned under another name (F23), then a truncated one (F22)
    renamed = [
        repo.PlannedFile("model/1/model.bin", source=p.source, size_bytes=p.size_bytes) if p.source else p
        for p in planned
    ]
    assert [f.id for f in repo.check_plan(renamed)] == ["F23"]
    truncated = [repo.PlannedFile(p.path, source=p.source, size_bytes=10) if p.source else p for p in planned]
    assert [f.id for f in repo.check_plan(truncated)] == ["F22"]


def test_the_image_cuda_picks_the_minimum_ami_and_an_old_one_is_refused() -> None:
    # Given Triton 26.05 (CUDA 13.2) on a g5 whose default driver is 470
    ami, findings = ami_for(TRITON_GPU, "ml.g5.xlarge", None)
    # Then the oldest AMI whose driver runs CUDA 13 is chosen, with the forward-compatibility warning
    assert ami == "al2023-ami-sagemaker-inference-gpu-4-1"
    assert [(f.id, f.severity) for f in findings] == [("F20", "warning")]
    # And an AMI named in the spec that is too old blocks (error 803)
    _, old = ami_for(TRITON_GPU, "ml.g5.xlarge", "al2-ami-sagemaker-inference-gpu-2")
    assert [(f.id, f.severity) for f in old] == [("F20", "blocking")]
    # And on CPU no AMI is set
    assert ami_for(TRITON_GPU, "ml.c6i.xlarge", None) == (None, [])


def test_the_tokenizer_model_feeds_what_the_transformers_tokenizer_feeds(tiny_artifact: Path) -> None:
    import importlib.util

    from transformers import AutoTokenizer

    spec = importlib.util.spec_from_file_location("tokenizer_model", "artifacts/triton/tokenizer_model.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # Given the python-backend tokenizer over the artifact's tokenizer.json
    tokenizer = module.load_tokenizer(str(tiny_artifact / "tokenizer"), 64)
    texts = module.texts_of(
        np.array([[b"a short text"], [b"a much longer text about encoders"]], dtype=object)
    )
    # When it encodes a batch
    ours = module.encode(tokenizer, texts, ["input_ids", "attention_mask"])
    # Then ids and masks equal the HF tokenizer's, padded to the longest
    reference = AutoTokenizer.from_pretrained(str(tiny_artifact / "tokenizer"))(
        texts, padding=True, return_tensors="np"
    )
    assert np.array_equal(ours["input_ids"], reference["input_ids"])
    assert np.array_equal(ours["attention_mask"], reference["attention_mask"])
    assert set(ours) == {"input_ids", "attention_mask"} and ours["input_ids"].dtype == np.int64


@pytest.fixture
def staged(aws: Aws, tiny_artifact: Path) -> tuple[Any, ArtifactManifest]:
    """The converted folder in the run's staging prefix."""
    s3 = aws.s3
    upload_folder(s3, tiny_artifact, f"s3://{BUCKET}/staging/run-1/")
    # What pack stages for a Triton spec beside the converted folder (the real wheel: tests/models)
    s3.put_object(Bucket=BUCKET, Key=f"staging/run-1/{repo.TOKENIZER_WHEEL}", Body=b"PK wheel bytes")
    return s3, read_manifest(tiny_artifact)


def test_triton_deploy_writes_the_repository_then_creates_model_and_endpoint(staged: tuple[Any, Any]) -> None:
    s3, manifest = staged
    req = request({"mode": "triton", "instance_type_fallbacks": ["ml.g5.xlarge"]})
    repository = f"s3://{BUCKET}/staging/run-1/a1/triton/"
    with stubbed("sagemaker") as (sagemaker, stub):
        stub.add_response(
            "create_model",
            {"ModelArn": "arn:aws:sagemaker:us-east-1:123456789012:model/db-run-1-a1-m0"},
            {
                "ModelName": "db-run-1-a1-m0",
                "ExecutionRoleArn": ROLE,
                "Tags": ANY,
                "PrimaryContainer": {
                    "Image": TRITON_GPU,
                    "ModelDataSource": {
                        "S3DataSource": {
                            "S3Uri": repository,
                            "S3DataType": "S3Prefix",
                            "CompressionType": "None",
                        }
                    },
                    "Environment": {"SAGEMAKER_TRITON_DEFAULT_MODEL_NAME": "ensemble"},
                },
            },
        )
        stub.add_response(
            "create_endpoint_config",
            {"EndpointConfigArn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint-config/db-run-1-a1"},
            {
                "MetricsConfig": {
                    "EnableEnhancedMetrics": True,
                    "EnableDetailedObservability": True,
                    "MetricPublishFrequencyInSeconds": 10,
                },
                "EndpointConfigName": "db-run-1-a1",
                "Tags": ANY,
                "ProductionVariants": [
                    {
                        "VariantName": "primary",
                        "ModelName": "db-run-1-a1-m0",
                        "InstanceType": "ml.g5.xlarge",
                        "InitialInstanceCount": 1,
                        "ContainerStartupHealthCheckTimeoutInSeconds": 600,
                        "ModelDataDownloadTimeoutInSeconds": 600,
                        "InferenceAmiVersion": "al2023-ami-sagemaker-inference-gpu-4-1",
                    }
                ],
            },
        )
        stub.add_response(
            "create_endpoint",
            {"EndpointArn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint/db-run-1-a1"},
            {"EndpointName": "db-run-1-a1", "EndpointConfigName": "db-run-1-a1", "Tags": ANY},
        )
        result = deploy(req, sagemaker=sagemaker, settings=SETTINGS, s3=s3)
    # Then the repository is in S3 under the run's staging folder, the weights copied whole
    keys = {
        o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="staging/run-1/a1/triton/")["Contents"]
    }
    onnx = s3.head_object(Bucket=BUCKET, Key="staging/run-1/a1/triton/model/1/model.onnx")["ContentLength"]
    assert onnx == next(f.size_bytes for f in manifest.files if f.path == manifest.onnx_file)
    assert "staging/run-1/a1/triton/ensemble/config.pbtxt" in keys
    # And the tokenizers wheel sits beside the tokenizer's model.py, which unpacks it at load
    assert "staging/run-1/a1/triton/tokenizer/1/tokenizers.whl" in keys
    assert result.staging_uris == [repository]
    assert result.effective_hosting["inference_ami_version"] == "al2023-ami-sagemaker-inference-gpu-4-1"


def test_a_repository_that_fails_its_checks_is_not_uploaded(
    staged: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    s3, _ = staged
    monkeypatch.setattr(repo, "_tensors", lambda names, t, d: "\n".join(repo._tensor(n, t, d) for n in names))
    import workflows.hosting.triton as triton_mode

    monkeypatch.setattr(triton_mode, "plan_repository", repo.plan_repository)
    req = request({"mode": "triton", "instance_type_fallbacks": ["ml.c6i.xlarge"]})
    with stubbed("sagemaker") as (sagemaker, _), pytest.raises(PreflightBlocked, match="F19"):
        deploy(req, sagemaker=sagemaker, settings=SETTINGS, s3=s3)
    assert s3.list_objects_v2(Bucket=BUCKET, Prefix="staging/run-1/a1/")["KeyCount"] == 0


def test_the_templates_ship_inside_the_artifacts_package() -> None:
    # The templates exist where the deploy function reads them (artifacts/ ships in the asset).
    from importlib.resources import files

    names = sorted(
        p.name for p in (files("artifacts") / "triton").iterdir() if p.name.endswith((".pbtxt", ".py"))
    )
    assert json.dumps(names) == json.dumps(
        ["ensemble.pbtxt", "model.pbtxt", "tokenizer.pbtxt", "tokenizer_model.py"]
    )


def test_a_tokenizer_ensemble_without_the_staged_wheel_stops_before_any_write(
    staged: tuple[Any, Any],
) -> None:
    # Given an artifact packed without the tokenizers wheel (packed for another mode)
    s3, _ = staged
    s3.delete_object(Bucket=BUCKET, Key=f"staging/run-1/{repo.TOKENIZER_WHEEL}")
    req = request({"mode": "triton", "instance_type_fallbacks": ["ml.g5.xlarge"]})
    # When it is deployed, Then it stops naming the wheel and the fix, with nothing created or written
    with (
        stubbed("sagemaker") as (sagemaker, _),
        pytest.raises(ArtifactIncomplete, match="tokenizers wheel") as stop,
    ):
        deploy(req, sagemaker=sagemaker, settings=SETTINGS, s3=s3)
    assert "tokenizer_ensemble: false" in str(stop.value.fix)
    assert s3.list_objects_v2(Bucket=BUCKET, Prefix="staging/run-1/a1/")["KeyCount"] == 0
