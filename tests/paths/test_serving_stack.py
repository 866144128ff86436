"""The real serving stack: HF inference toolkit on Multi Model Server (Java) in the DLC-like environment.

Failures here come from the stack itself, never from the fault plan: a requirements.txt without
onnxruntime (F01), a graph fed an input it does not take (F03), a truncated model.onnx (F22), a
requirement the offline wheelhouse cannot install, and a serverless memory cap too small for the
model (F14). The module skips, saying why, where Java or the DLC-like environment is unavailable.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

from tests.conftest import serving_processes
from tests.support.local_sagemaker import (
    ONE_TEXT,
    container,
    endpoint_settled,
    leftover_cgroups,
    log_text,
    runtime,
    upload_artifact,
    wait_for,
)
from workflows.container.environment import resolve_serving_stack
from workflows.conversion.manifest import file_entries, read_manifest, write_manifest
from workflows.local.engine import LocalEngine
from workflows.local.sagemaker.memory import memory_cap_support
from workflows.processes.guardian import group_members

ROLE = "arn:aws:iam::123456789012:role/deploybench-local"

NON_FILTERING_CODE = textwrap.dedent(
    '''
    """Serving code with the field's F03 bug: it feeds the graph every tensor the tokenizer emits."""
    import json, os
    import numpy as np
    import onnxruntime as ort
    from transformers import AutoTokenizer

    def model_fn(model_dir, context=None):
        session = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), providers=["CPUExecutionProvider"])
        return {"session": session, "tokenizer": AutoTokenizer.from_pretrained(os.path.join(model_dir, "tokenizer"))}

    def input_fn(data, content_type, context=None):
        return json.loads(data)

    def predict_fn(data, model, context=None):
        encoded = model["tokenizer"](data["inputs"], padding=True, return_tensors="np")
        feed = {name: value.astype(np.int64) for name, value in encoded.items()}
        return model["session"].run(None, feed)[0].tolist()

    def output_fn(prediction, accept, context=None):
        return json.dumps({"embeddings": prediction})
    '''
)


def ids_only_graph(path: Path, weights: int = 0) -> None:
    """A graph taking only input_ids and attention_mask (no token_type_ids), optionally carrying a
    ``weights``-float initializer it really uses (to make a model big in memory, not on the wire)."""
    import onnx
    from onnx import TensorProto, helper

    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask")
    ]
    nodes = [helper.make_node("Mul", ["input_ids", "attention_mask"], ["kept"])]
    initializers = []
    if weights:
        table = np.zeros(weights, dtype=np.float32)
        initializers.append(
            helper.make_tensor("table", TensorProto.FLOAT, [weights], table.tobytes(), raw=True)
        )
        nodes.append(helper.make_node("Gather", ["table", "kept"], ["values"]))
    else:
        nodes.append(helper.make_node("Cast", ["kept"], ["values"], to=TensorProto.FLOAT))
    nodes.append(helper.make_node("ReduceMean", ["values"], ["embedding"], axes=[1], keepdims=1))
    output = helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", 1])
    graph = helper.make_graph(nodes, "ids-only", inputs, [output], initializer=initializers)
    # IR 8 with opset 17: onnx 1.23 writes IR 14 by default, which onnxruntime 1.31 refuses.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.save_model(model, str(path))


@pytest.fixture(scope="module")
def stack() -> Any:
    chosen = resolve_serving_stack("auto")
    if chosen.kind != "mms":
        pytest.skip(f"the DLC's serving stack is not available here: {chosen.reason}")
    return chosen


@pytest.fixture(scope="module")
def artifacts(tiny_artifact: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("stack-artifacts")
    made = {}
    for name in ("f01", "f03", "f22", "optimum"):
        made[name] = root / name
        shutil.copytree(tiny_artifact, made[name])
    # F01: the requirements file forgets onnxruntime
    (made["f01"] / "code" / "requirements.txt").write_text("# onnxruntime forgotten\n")
    # F03: a graph without token_type_ids, served by code that does not filter the tokenizer's output
    ids_only_graph(made["f03"] / "model.onnx")
    (made["f03"] / "code" / "inference.py").write_text(NON_FILTERING_CODE)
    # F22: model.onnx cut in half, as an interrupted download leaves it
    onnx_file = made["f22"] / "model.onnx"
    onnx_file.write_bytes(onnx_file.read_bytes()[: onnx_file.stat().st_size // 2])
    # A requirement the offline wheelhouse cannot install (optimum, F28)
    (made["optimum"] / "code" / "requirements.txt").write_text("optimum\n")
    return made


@pytest.fixture(scope="module")
def engine(stack: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalEngine]:
    workdir = tmp_path_factory.mktemp("stack-engine")
    with LocalEngine(workdir=workdir, serving="mms") as running:
        yield running
    assert serving_processes() == []
    assert leftover_cgroups(running) == []


@pytest.fixture(scope="module")
def endpoints(
    engine: LocalEngine,
    artifacts: dict[str, Path],
    tiny_artifact: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[str, Any]]:
    """Every endpoint of the module, created at once (MMS starts take tens of seconds each)."""
    tmp = tmp_path_factory.mktemp("stack-tarballs")
    sagemaker = engine.client("sagemaker")
    uris = {
        name: upload_artifact(engine, folder, f"{name}/model.tar.gz", tmp)
        for name, folder in artifacts.items()
    }
    uris["good"] = upload_artifact(engine, tiny_artifact, "good/model.tar.gz", tmp)
    models = {
        "direct": {
            "Containers": [
                {**container(uris["good"], SAGEMAKER_MODEL_SERVER_WORKERS="2"), "ContainerHostname": "embed"},
                {**container(uris["f01"]), "ContainerHostname": "broken"},
            ],
            "InferenceExecutionConfig": {"Mode": "Direct"},
        },
        "f03": {"PrimaryContainer": container(uris["f03"])},
        "f22": {"PrimaryContainer": container(uris["f22"])},
        "optimum": {"PrimaryContainer": container(uris["optimum"])},
    }
    for name, model in models.items():
        sagemaker.create_model(ModelName=name, ExecutionRoleArn=ROLE, **model)
        sagemaker.create_endpoint_config(
            EndpointConfigName=name,
            ProductionVariants=[
                {
                    "VariantName": "primary",
                    "ModelName": name,
                    "InstanceType": "ml.c6i.xlarge",
                    "InitialInstanceCount": 1,
                }
            ],
        )
        sagemaker.create_endpoint(EndpointName=name, EndpointConfigName=name)
    return {name: endpoint_settled(sagemaker, name, timeout_s=900)[-1] for name in models}


def model_error(engine: LocalEngine, endpoint: str, **kwargs: Any) -> dict[str, Any]:
    with pytest.raises(ClientError) as caught:
        runtime(engine).invoke_endpoint(
            EndpointName=endpoint, Body=ONE_TEXT, ContentType="application/json", **kwargs
        )
    return dict(caught.value.response)


def handler_message(response: dict[str, Any]) -> str:
    """The toolkit's message inside a ModelError. MMS writes its body with Gson: pretty-printed, with
    quotes escaped (``No module named \\u0027onnxruntime\\u0027``), so it is read as JSON."""
    body = json.loads(response["OriginalMessage"])
    assert body["code"] == 400 and body["type"] == "InternalServerException"
    return str(body["message"])


def test_f01_a_requirements_file_without_onnxruntime_passes_health_and_fails_every_call(
    engine: LocalEngine, endpoints: dict[str, dict[str, Any]], stack: Any
) -> None:
    # Given the DLC-like base has no onnxruntime (as the HF DLC)
    import subprocess

    probe = subprocess.run(
        [str(stack.environment.python), "-c", "import onnxruntime"], capture_output=True, text=True
    )
    assert "No module named 'onnxruntime'" in probe.stderr
    # Then the endpoint co-hosting the broken container is InService (the health check passed)
    assert endpoints["direct"]["EndpointStatus"] == "InService"
    # And the broken container answers every call with the module error, the good one embeds
    response = model_error(engine, "direct", TargetContainerHostname="broken")
    assert response["Error"]["Code"] == "ModelError"
    assert response["OriginalStatusCode"] == 400
    assert handler_message(response) == "No module named 'onnxruntime'"
    assert "No module named \\u0027onnxruntime\\u0027" in response["Error"]["Message"]
    good = runtime(engine).invoke_endpoint(
        EndpointName="direct", Body=ONE_TEXT, ContentType="application/json", TargetContainerHostname="embed"
    )
    assert len(json.loads(good["Body"].read())["embeddings"]) == 1


def test_workers_setting_starts_that_many_mms_workers_on_their_own_ports(
    engine: LocalEngine, endpoints: dict[str, dict[str, Any]]
) -> None:
    assert engine.sagemaker is not None
    containers = {
        c.spec.hostname: c for c in engine.sagemaker.endpoint_containers(engine.sagemaker.endpoints["direct"])
    }
    embed = containers["embed"]
    # Then the embed container (SAGEMAKER_MODEL_SERVER_WORKERS=2) runs MMS's fork server and 2 workers
    assert embed.process is not None
    workers = [
        p
        for p in map(psutil.Process, group_members(embed.process.pid))
        if "model_service_worker" in " ".join(p.cmdline())
    ]
    assert len(workers) == 3
    assert "Default workers per model: 2" in embed.spec.log_path.read_text()
    # And each container has its own server on its own port
    assert containers["embed"].port != containers["broken"].port


def test_f03_a_graph_without_token_type_ids_fed_by_unfiltered_serving_code(
    engine: LocalEngine, endpoints: dict[str, dict[str, Any]]
) -> None:
    assert endpoints["f03"]["EndpointStatus"] == "InService"
    # When it is invoked, onnxruntime refuses the tokenizer's extra input
    response = model_error(engine, "f03")
    assert response["Error"]["Code"] == "ModelError"
    assert "Invalid input name: token_type_ids" in handler_message(response)


def test_f22_a_truncated_model_onnx_fails_to_load_in_the_container(
    engine: LocalEngine, endpoints: dict[str, dict[str, Any]]
) -> None:
    # Then MMS swallows the load error (health check passes) and every call reports it: the serving
    # code compares model.onnx with the manifest before onnxruntime reads it
    assert endpoints["f22"]["EndpointStatus"] == "InService"
    response = model_error(engine, "f22")
    assert response["OriginalStatusCode"] == 400
    assert "model.onnx is " in response["Error"]["Message"]
    assert "truncated or replaced" in response["Error"]["Message"]
    assert "model.onnx" in log_text(engine, "/aws/sagemaker/Endpoints/f22")


def test_a_requirement_the_container_cannot_install_fails_the_health_check(
    engine: LocalEngine, endpoints: dict[str, dict[str, Any]]
) -> None:
    # Then the toolkit's pip step fails, the server exits, and the endpoint fails its health check
    failed = endpoints["optimum"]
    assert failed["EndpointStatus"] == "Failed"
    assert "did not pass the ping health check" in failed["FailureReason"]
    text = log_text(engine, "/aws/sagemaker/Endpoints/optimum")
    assert "No matching distribution found for optimum" in text
    assert "failed to install required packages" in text


def test_container_logs_reach_cloudwatch_per_container_naming_the_stack(
    engine: LocalEngine, endpoints: dict[str, dict[str, Any]]
) -> None:
    logs = engine.client("logs")
    streams = [
        s["logStreamName"]
        for s in logs.describe_log_streams(logGroupName="/aws/sagemaker/Endpoints/direct")["logStreams"]
    ]
    # Then each container has its stream under the variant and instance
    assert sorted(s.rsplit("/", 1)[-1] for s in streams) == ["broken", "embed"]
    assert all(s.startswith("primary/i-") for s in streams)
    text = log_text(engine, "/aws/sagemaker/Endpoints/direct")
    assert "serves with the Multi Model Server 1.1.11" in text
    assert "Model model loaded" in text


@pytest.fixture(scope="module")
def big_model_uri(engine: LocalEngine, tiny_artifact: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A model whose graph holds 512 MB of weights (zeros: 0.5 MB on the wire, 512 MB in memory)."""
    supported, how = memory_cap_support()
    if not supported:
        pytest.skip(f"no real memory cap on this machine: {how}")
    big = tmp_path_factory.mktemp("big") / "artifact"
    shutil.copytree(tiny_artifact, big)
    ids_only_graph(big / "model.onnx", weights=128 * 1024 * 1024)
    # A model converted this way would carry its own manifest: the serving code refuses a model.onnx
    # whose size differs from the manifest's (F22), so the manifest lists the big graph.
    manifest = read_manifest(big)
    write_manifest(big, manifest.model_copy(update={"files": file_entries(big)}))
    return upload_artifact(engine, big, "big/model.tar.gz", big.parent)


def capped_container(engine: LocalEngine, endpoint: str) -> Any:
    assert engine.sagemaker is not None
    [capped] = engine.sagemaker.endpoint_containers(engine.sagemaker.endpoints[endpoint])
    assert capped.memory is not None
    return capped


def test_f14_serverless_memory_too_small_for_the_model_kills_the_worker(
    engine: LocalEngine, big_model_uri: str
) -> None:
    # Given the big model on 1024 MB serverless
    sagemaker = engine.client("sagemaker")
    sagemaker.create_model(ModelName="big", ExecutionRoleArn=ROLE, PrimaryContainer=container(big_model_uri))
    sagemaker.create_endpoint_config(
        EndpointConfigName="big",
        ProductionVariants=[
            {
                "VariantName": "primary",
                "ModelName": "big",
                "ServerlessConfig": {"MemorySizeInMB": 1024, "MaxConcurrency": 1},
            }
        ],
    )
    sagemaker.create_endpoint(EndpointName="big", EndpointConfigName="big")
    assert endpoint_settled(sagemaker, "big")[-1]["EndpointStatus"] == "InService"
    # When it is invoked, the client times out (the cold start, then a worker that never loads)
    with pytest.raises((ReadTimeoutError, ClientError)) as caught:
        runtime(engine, read_timeout=60).invoke_endpoint(
            EndpointName="big", Body=ONE_TEXT, ContentType="application/json"
        )
    if isinstance(caught.value, ClientError):
        assert "Your invocation timed out" in str(caught.value.response["Error"]["Message"])
    # Then the model server log shows the field's signature, and the endpoint stays InService
    text = wait_for(
        lambda: {"text": log_text(engine, "/aws/sagemaker/Endpoints/big")},
        lambda d: "Worker died" in d["text"],
        timeout_s=300,
    )[-1]["text"]
    assert "Load model failed: model, error: Worker died." in text
    assert "memory capped at 1024 MB" in text
    assert sagemaker.describe_endpoint(EndpointName="big")["EndpointStatus"] == "InService"
    # And it was the kernel's memory cap that killed it
    assert capped_container(engine, "big").memory.oom_kills() >= 1
    sagemaker.delete_endpoint(EndpointName="big")


def test_f02_workers_outgrowing_the_instance_memory_die_with_no_oom_in_the_log(
    engine: LocalEngine, big_model_uri: str
) -> None:
    # Given 8 workers (one per vCPU of the field's ml.c6i.2xlarge; each loads its own 512 MB
    # session) on an instance whose memory is 4 GB (ml.c5.large)
    sagemaker = engine.client("sagemaker")
    sagemaker.create_model(
        ModelName="workers",
        ExecutionRoleArn=ROLE,
        PrimaryContainer=container(big_model_uri, SAGEMAKER_MODEL_SERVER_WORKERS="8"),
    )
    sagemaker.create_endpoint_config(
        EndpointConfigName="workers",
        ProductionVariants=[
            {
                "VariantName": "primary",
                "ModelName": "workers",
                "InstanceType": "ml.c5.large",
                "InitialInstanceCount": 1,
            }
        ],
    )
    sagemaker.create_endpoint(EndpointName="workers", EndpointConfigName="workers")
    assert engine.sagemaker is not None
    endpoint = engine.sagemaker.endpoints["workers"]
    # When the workers load, the ones that do not fit die as in the field
    text = wait_for(
        lambda: {"text": log_text(engine, "/aws/sagemaker/Endpoints/workers")},
        lambda d: "Worker died" in d["text"],
        timeout_s=600,
    )[-1]["text"]
    # Then it was the instance's memory that killed them, and the log says nothing of memory (the
    # field's F02: no OOM or Killed line in CloudWatch)
    assert "instance ml.c5.large memory, 4096 MB, caps its containers" in text
    with engine.sagemaker.lock:
        containers = list(endpoint.starting) + engine.sagemaker.endpoint_containers(endpoint)
    assert any(c.memory is not None and c.memory.oom_kills() >= 1 for c in containers)
    server_lines = [line for line in text.splitlines() if not line.startswith("deploybench local SageMaker")]
    assert not [line for line in server_lines if "Out of memory" in line or "Killed process" in line]
