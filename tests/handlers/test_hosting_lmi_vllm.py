"""LMI (one DJL container, several models: F17, F18) and vLLM (standalone, F25, F26, F27)."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from botocore.response import StreamingBody
from botocore.stub import ANY

from tests.support.aws import Aws
from tests.support.hosting import BUCKET, ROLE, SETTINGS, describe_request, request, stubbed
from workflows.contracts import DeployOverrides, DeployResult
from workflows.conversion.manifest import MANIFEST_FILE, read_manifest
from workflows.errors import PreflightBlocked, ServedModelMismatch, SpecInvalid
from workflows.hosting import lmi, vllm
from workflows.hosting.sources import BUNDLED_HUB_ID
from workflows.steps.deploy_endpoint import deploy
from workflows.steps.describe_endpoint import describe

VLLM_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/vllm:0.26.0-gpu-py312-cu130-ubuntu22.04-sagemaker"
# The Java-first CPU image the field ran (F17); the SDK's table does not list it, so a spec names it.
LMI_CPU_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.35.0-cpu-full"
ARN = "arn:aws:sagemaker:us-east-1:123456789012:model/db-run-1-a1-m0"


@pytest.fixture
def s3(aws: Aws, tiny_artifact: Path, tiny_bert: Path) -> Any:
    """The run's manifest in staging/ and its model folder in sources/."""
    client = aws.s3
    client.put_object(
        Bucket=BUCKET,
        Key=f"staging/run-1/{MANIFEST_FILE}",
        Body=(tiny_artifact / MANIFEST_FILE).read_bytes(),
    )
    for path in sorted(p for p in tiny_bert.iterdir() if p.is_file()):
        client.upload_file(str(path), BUCKET, f"sources/run-1/{path.name}")
    return client


def expect_endpoint(stub: Any, container: dict[str, Any], instance_type: str) -> None:
    stub.add_response(
        "create_model",
        {"ModelArn": ARN},
        {"ModelName": "db-run-1-a1-m0", "ExecutionRoleArn": ROLE, "Tags": ANY, "PrimaryContainer": container},
    )
    stub.add_response("create_endpoint_config", {"EndpointConfigArn": ARN}, {
        "EndpointConfigName": "db-run-1-a1", "Tags": ANY, "MetricsConfig": {"EnableEnhancedMetrics": True, "EnableDetailedObservability": True, "MetricPublishFrequencyInSeconds": 10},
        "ProductionVariants": [{"VariantName": "primary", "ModelName": "db-run-1-a1-m0", "InstanceType": instance_type,
                                "InitialInstanceCount": 1, "ContainerStartupHealthCheckTimeoutInSeconds": 600,
                                "ModelDataDownloadTimeoutInSeconds": 600}],
    })  # fmt: skip
    stub.add_response(
        "create_endpoint",
        {"EndpointArn": ARN},
        {"EndpointName": "db-run-1-a1", "EndpointConfigName": "db-run-1-a1", "Tags": ANY},
    )


# --- LMI ---------------------------------------------------------------------------------------


def test_lmi_on_cpu_ships_the_python_requirements_and_copies_every_model(s3: Any) -> None:
    # Given the run's model from S3 and a co-hosted Hub model, on the Java-first CPU image (F17)
    req = request(
        {
            "mode": "lmi",
            "image": LMI_CPU_IMAGE,
            "models": [{"name": "nli", "source": "org/nli-model", "task": "classification"}],
        },
        source=f"s3://{BUCKET}/sources/run-1/",
        overrides=DeployOverrides(extra_requirements=["sentencepiece", "tiktoken"]),
    )
    folder = f"s3://{BUCKET}/staging/run-1/a1/lmi/"
    with stubbed("sagemaker") as (sagemaker, stub):
        expect_endpoint(
            stub,
            {
                "Image": LMI_CPU_IMAGE,
                "ModelDataSource": {
                    "S3DataSource": {"S3Uri": folder, "S3DataType": "S3Prefix", "CompressionType": "None"}
                },
            },
            "ml.c6i.xlarge",
        )
        result = deploy(req, sagemaker=sagemaker, settings=SETTINGS, s3=s3)
    read = lambda key: s3.get_object(Bucket=BUCKET, Key=f"staging/run-1/a1/lmi/{key}")["Body"].read().decode()  # noqa: E731
    # Then requirements.txt has the field's packages and the remediation's line, once each
    assert read("requirements.txt").split() == [
        "transformers",
        "torch",
        "sentencepiece",
        "protobuf",
        "peft",
        "accelerate",
        "tiktoken",
    ]
    # And both models are listed; the S3 one is copied beside the handler, the Hub one named by id
    listed = json.loads(read("deploybench-models.json"))["models"]
    assert [(m["name"], m["source"], m["task"]) for m in listed] == [
        ("main", "models/main", "embedding"),
        ("nli", "org/nli-model", "classification"),
    ]
    assert "engine=Python" in read("serving.properties") and "option.entryPoint=model.py" in read(
        "serving.properties"
    )
    assert "model.safetensors" in {
        k["Key"].rsplit("/", 1)[-1]
        for k in s3.list_objects_v2(Bucket=BUCKET, Prefix="staging/run-1/a1/lmi/models/main/")["Contents"]
    }
    assert result.staging_uris == [folder]


def test_lmi_on_cpu_without_an_image_is_refused_before_any_call(s3: Any) -> None:
    # Given LMI on a CPU instance and no hosting.image: the SDK's table lists no CPU djl-inference image
    req = request({"mode": "lmi", "models": []}, source=f"s3://{BUCKET}/sources/run-1/")
    keys = lambda: [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]  # noqa: E731
    before = keys()
    # When it deploys, Then it is refused, naming the missing image and the fix, and nothing was created
    with stubbed("sagemaker") as (sagemaker, _), pytest.raises(SpecInvalid) as refused:
        deploy(req, sagemaker=sagemaker, settings=SETTINGS, s3=s3)
    assert "no CPU image of djl-inference" in refused.value.message
    assert "hosting.image" in (refused.value.fix or "")
    assert keys() == before


def test_lmi_gpu_image_needs_no_requirements_and_a_local_folder_is_refused() -> None:
    assert lmi.requirements("x/djl-inference:0.35.0-lmi17.0.0-cu128", []) is None
    with pytest.raises(SpecInvalid, match="neither an s3:// prefix nor a Hub id"):
        lmi.model_entries(
            request({"mode": "lmi"}, source="/home/me/model"), request({"mode": "lmi"}).spec.hosting
        )
    assert (
        lmi.model_entries(request({"mode": "lmi"}), request({"mode": "lmi"}).spec.hosting)[0][0]["source"]
        == BUNDLED_HUB_ID
    )


def handler_module() -> Any:
    """artifacts/lmi/model.py as the container imports it (djl_python is needed only by handle())."""
    import sys

    spec = importlib.util.spec_from_file_location("deploybench_lmi_model", "artifacts/lmi/model.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their annotations through it
    spec.loader.exec_module(module)
    return module


def test_the_lmi_handler_serves_several_models_like_the_onnx_artifact(
    tiny_bert: Path, tiny_artifact: Path, tmp_path: Path
) -> None:
    import sys

    # Given the container folder: the tiny BERT twice (embedding and classification heads)
    from workflows.conversion.random_models import build_tiny_bert

    build_tiny_bert(tmp_path / "models" / "cls", task="classification")
    (tmp_path / "models").mkdir(exist_ok=True)
    (tmp_path / "models" / "main").symlink_to(tiny_bert)
    (tmp_path / "deploybench-models.json").write_text(json.dumps({"models": [
        {"name": "main", "source": "models/main", "task": "embedding", "max_length": 64},
        {"name": "cls", "source": "models/cls", "task": "classification"},
    ]}))  # fmt: skip
    module = handler_module()
    service = module.Service(str(tmp_path), device="cpu", dtype="fp32")
    body = {"inputs": ["a short text", "another, somewhat longer text"], "parameters": {"batch_size": 1}}
    # When the default model answers, its embeddings match the ONNX artifact's (normalised)
    ours = np.array(service.answer(body)["embeddings"])
    sys.path.insert(0, str(tiny_artifact / "code"))
    try:
        import inference  # the HF DLC serving code of the artifact

        onnx = np.array(inference.predict_fn(body, inference.model_fn(str(tiny_artifact)))["embeddings"])
    finally:
        sys.path.remove(str(tiny_artifact / "code"))
        sys.modules.pop("inference", None)
    onnx = onnx / np.linalg.norm(onnx, axis=1, keepdims=True)
    assert ours.shape == onnx.shape and np.allclose(ours, onnx, atol=1e-4)
    # And the other model answers by name with its labels, and an unknown name is refused
    predictions = service.answer({**body, "model": "cls"})["predictions"]
    assert {p["label"] for p in predictions} <= {"entailment", "neutral", "contradiction"}
    with pytest.raises(ValueError, match="not served here"):
        service.answer({**body, "model": "missing"})


# --- vLLM --------------------------------------------------------------------------------------


def test_vllm_is_told_what_to_serve_and_mounts_the_s3_model(s3: Any) -> None:
    req = request(
        {"mode": "vllm", "instance_type_fallbacks": ["ml.g5.xlarge"]}, source=f"s3://{BUCKET}/sources/run-1/"
    )
    env = {
        "SM_VLLM_MODEL": "/opt/ml/model",
        "SM_VLLM_RUNNER": "pooling",
        "SM_VLLM_CONVERT": "embed",
        "SM_VLLM_MAX_MODEL_LEN": "512",
    }
    with stubbed("sagemaker") as (sagemaker, stub):
        expect_endpoint(stub, {
            "Image": VLLM_IMAGE, "Environment": env,
            "ModelDataSource": {"S3DataSource": {"S3Uri": f"s3://{BUCKET}/sources/run-1/", "S3DataType": "S3Prefix", "CompressionType": "None"}},
        }, "ml.g5.xlarge")  # fmt: skip
        result = deploy(req, sagemaker=sagemaker, settings=SETTINGS, s3=s3)
    assert result.mode == "vllm" and result.target == {}


def test_an_architecture_vllm_does_not_support_is_refused_before_any_call(
    s3: Any, tiny_artifact: Path
) -> None:
    # Given the converted model is a DeBERTa-v2 classifier (F25)
    manifest = read_manifest(tiny_artifact).model_copy(
        update={"architecture": "DebertaV2ForSequenceClassification"}
    )
    s3.put_object(
        Bucket=BUCKET, Key=f"staging/run-1/{MANIFEST_FILE}", Body=manifest.model_dump_json().encode()
    )
    req = request({"mode": "vllm"}, source=f"s3://{BUCKET}/sources/run-1/")
    with stubbed("sagemaker") as (sagemaker, _), pytest.raises(PreflightBlocked, match="F25"):
        deploy(req, sagemaker=sagemaker, settings=SETTINGS, s3=s3)


def served(model: str) -> dict[str, Any]:
    payload = json.dumps({"id": "classify-1", "object": "list", "model": model, "data": []}).encode()
    return {"Body": StreamingBody(io.BytesIO(payload), len(payload)), "ContentType": "application/json"}


@pytest.mark.parametrize("answered", [BUNDLED_HUB_ID, "Qwen/Qwen3-0.6B"])
def test_once_in_service_the_served_model_must_be_the_requested_one(answered: str) -> None:
    from tests.support.hosting import NOW

    # Given a vLLM endpoint that is InService
    req = request({"mode": "vllm"})
    deployed = DeployResult(endpoint_name="db-run-1-a1", endpoint_config_name="c", model_names=["m"],
                            instance_type="ml.g5.xlarge", created_at=NOW, mode="vllm")  # fmt: skip
    poll = describe_request(req, deployed)
    with stubbed("sagemaker") as (sagemaker, sm), stubbed("sagemaker-runtime") as (runtime, rt):
        sm.add_response("describe_endpoint", {"EndpointName": "db-run-1-a1", "EndpointArn": ARN, "EndpointConfigName": "c",
                        "EndpointStatus": "InService", "CreationTime": NOW, "LastModifiedTime": NOW}, {"EndpointName": "db-run-1-a1"})  # fmt: skip
        rt.add_response("invoke_endpoint", served(answered), {
            "EndpointName": "db-run-1-a1", "ContentType": "application/json",
            "Body": json.dumps({"input": [vllm.PROBE_TEXT]}).encode(),
        })  # fmt: skip
        # When the wait loop polls: the probe asks without naming a model, so the answer says which one serves
        if answered == BUNDLED_HUB_ID:
            assert describe(poll, sagemaker=sagemaker, runtime=runtime).status == "InService"
        else:
            # Then a default model served instead of the requested one fails the run (F26)
            with pytest.raises(ServedModelMismatch, match="Qwen/Qwen3-0.6B"):
                describe(poll, sagemaker=sagemaker, runtime=runtime)


def test_pairs_are_joined_with_the_family_separator() -> None:
    # vLLM has no text pairs (F27): XLM-RoBERTa joins with </s></s>, BERT with [SEP]
    assert vllm.pair_separator("XLMRobertaForSequenceClassification") == "</s></s>"
    assert vllm.pair_separator("BertForSequenceClassification") == "[SEP]"
    assert vllm.pair_separator("DebertaV2ForSequenceClassification", "[SEP]") == "[SEP]"
    with pytest.raises(SpecInvalid, match="pair_separator"):
        vllm.pair_separator("T5EncoderModel")
    body = json.loads(vllm.request_body(["one", ["premise", "hypothesis"]], "</s></s>"))
    assert body == {"input": ["one", "premise</s></s>hypothesis"]}
