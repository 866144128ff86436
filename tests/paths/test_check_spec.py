"""CheckSpec: the checks on the spec alone, as the pipeline's first state and as plain functions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import state_machines
from tests.conftest import fast_spec
from tests.support import bad_inputs as bad
from tests.support.aws import Aws
from tests.support.quotas import stubbed_quotas
from workflows.contracts import ConvertResult, Finding, PackResult, PreflightRequest, PreflightResult
from workflows.conversion.manifest import MANIFEST_FILE
from workflows.errors import ModelSourceInvalid, PreflightBlocked, SpecInvalid
from workflows.preflight.pins import check_library_pins, satisfies
from workflows.spec import enums
from workflows.spec.model_source import check_model, sequence_limit
from workflows.spec.pipeline import parse_spec
from workflows.steps.check_spec import check_spec, spec_request

# --- the state -------------------------------------------------------------------------------------


def test_check_spec_is_the_first_state_and_fails_into_diagnosis() -> None:
    definition = state_machines.definition("deploy_pipeline")
    state = definition["States"]["CheckSpec"]
    # Then it runs first, before any conversion, and a failure takes the diagnosis and teardown path
    assert definition["StartAt"] == "CheckSpec"
    assert state["Next"] == "ConvertToOnnx"
    assert {c["Next"] for c in state["Catch"]} == {"DiagnoseFailure"}
    assert state["Resource"] == "${CheckSpecFunctionArn}"
    # And RunPreflight receives its result instead of running the same checks again
    assert definition["States"]["RunPreflight"]["Parameters"]["spec_check.$"] == "$.spec_check"
    assert "lambdas.check_spec.handler" in {f.handler for f in state_machines.FUNCTIONS}


def test_the_raw_input_is_validated_by_name_not_by_a_parser_traceback() -> None:
    with pytest.raises(SpecInvalid, match="has no 'spec'"):
        spec_request({"run_id": "r"})
    with pytest.raises(
        SpecInvalid, match=r"hosting\.instance_type_fallbacks\[0\]: .*did you mean 'ml\.c6i\.xlarge'"
    ):
        spec_request(
            {"run_id": "r", "spec": {"name": "x", "hosting": {"instance_type_fallbacks": ["ml.c6i.xlarge2"]}}}
        )
    assert spec_request({"run_id": "r", "spec": {"name": "x"}}).spec.name == "x"


def lambda_context() -> Any:
    from workflows.local.lambda_seam import LocalLambdaContext

    return LocalLambdaContext(
        function_name="deploybench-check-spec",
        invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:deploybench-check-spec",
        memory_limit_in_mb=512,
        timeout_s=60,
    )


@pytest.fixture
def aws_bucket() -> str:
    return "artifacts"


@pytest.fixture
def s3(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> Any:
    """moto's S3 as the handler's client (the one the spec check reads the model through)."""
    import lambdas.clients

    monkeypatch.setattr(lambdas.clients, "s3", lambda: aws.s3)
    return aws.s3


def upload(s3: Any, folder: Path, prefix: str) -> str:
    for path in folder.iterdir():
        s3.put_object(Bucket="artifacts", Key=f"{prefix}{path.name}", Body=path.read_bytes())
    return f"s3://artifacts/{prefix}"


def test_the_handler_reads_an_s3_model_without_downloading_it(
    s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lambdas.clients
    from lambdas.check_spec import handler

    # Given a complete model folder under an S3 prefix, and an account with quota for the run
    quotas, stubber = stubbed_quotas(
        {"ml.c6i.xlarge for endpoint usage": 2, "ml.c5.xlarge for processing job usage": 1}
    )
    monkeypatch.setattr(lambdas.clients, "service_quotas", lambda: quotas)
    source = upload(s3, bad.model_folder(tmp_path / "m"), "sources/run-1/")
    event = {
        "run_id": "run-1",
        "spec": {"name": "x", "model": {"source": source, "max_sequence_length": 128}},
    }
    # When the state's handler runs on the whole execution input
    result = PreflightResult.model_validate(handler(event, lambda_context()))
    # Then the model, its length and the spec-only preflight checks were checked
    assert any("BERT encoder" in line for line in result.checked)
    assert any("max_sequence_length 128 <= 512" in line for line in result.checked)
    assert any(line.startswith("F20 ") for line in result.checked)
    assert not any(line.startswith(("F01", "F02")) for line in result.checked)  # those need the artifact
    # And the account's quotas were read before any spend
    assert result.quotas == {
        "ml.c6i.xlarge for endpoint usage": 2.0,
        "ml.c5.xlarge for processing job usage": 1.0,
    }
    stubber.assert_no_pending_responses()


@pytest.mark.parametrize(
    ("folder", "message"),
    [
        ({"weights": bad.safetensors_bytes()[:-3]}, r"model\.safetensors is truncated .*header declares"),
        ({"weights": b""}, r"0 bytes, not even a header"),
        ({"tokenizer": False}, "has no tokenizer files"),
    ],
)
def test_a_broken_s3_model_is_refused_by_name(
    s3: Any, tmp_path: Path, folder: dict[str, Any], message: str
) -> None:
    source = upload(s3, bad.model_folder(tmp_path / "m", **folder), "sources/run-2/")
    spec = parse_spec({"name": "x", "model": {"source": source}})
    with pytest.raises(ModelSourceInvalid, match=message):
        check_spec(spec, s3=s3)


def test_a_blocking_spec_finding_stops_before_conversion_with_every_finding() -> None:
    spec = fast_spec(
        "bundled",
        hosting={
            "mode": "multi-container",
            "instance_type_fallbacks": ["ml.g5.xlarge"],
            "models": [{"name": "aux"}],
        },
    )
    with pytest.raises(PreflightBlocked, match=r"before anything was converted:\nF04 \(blocking\)"):
        check_spec(spec, s3=None)


# --- RunPreflight carries what CheckSpec found ---------------------------------------------------


def test_run_preflight_carries_the_spec_findings_instead_of_checking_again(
    s3: Any, tiny_artifact: Path
) -> None:
    from workflows.artifact.manifest import ArtifactManifest
    from workflows.steps.run_preflight import preflight

    # Given the staged artifact and what CheckSpec found (a warning it alone could see)
    manifest = ArtifactManifest.model_validate_json((tiny_artifact / MANIFEST_FILE).read_text())
    staging = upload_tree(s3, tiny_artifact, "staging/run-3/")
    warning = Finding(id="instance-type", severity="warning", message="carried", fix="none")
    carried = PreflightResult(findings=[warning], checked=["instance-type instance types known"])
    request = PreflightRequest(
        run_id="run-3",
        spec=fast_spec("bundled"),
        convert=ConvertResult(staging_uri=staging, manifest=manifest, seconds=1.0),
        pack=PackResult(
            model_data_uri=f"{staging}model.tar.gz",
            size_bytes=1,
            sha256="0" * 64,
            compression="fast",
            seconds=1.0,
        ),
        spec_check=carried,
    )
    # When RunPreflight runs
    result = preflight(request, s3=s3)
    # Then the spec's finding is in its result, its checks are listed once, and the artifact's ran
    assert warning in result.findings
    assert result.checked.count("instance-type instance types known") == 1
    assert not any(line.startswith("F20 ") for line in result.checked)
    assert any(line.startswith("F01/F28 ") for line in result.checked)


def upload_tree(s3: Any, root: Path, prefix: str) -> str:
    for path in root.rglob("*"):
        if path.is_file():
            s3.put_object(Bucket="artifacts", Key=f"{prefix}{path.relative_to(root)}", Body=path.read_bytes())
    return f"s3://artifacts/{prefix}"


# --- limits, enums, pins ---------------------------------------------------------------------------


def test_the_sequence_limit_rests_on_positions_less_the_offset_and_a_sane_tokenizer() -> None:
    assert sequence_limit({"max_position_embeddings": 514}, {}, 2)[0] == 512
    assert sequence_limit({"max_position_embeddings": 512}, {"model_max_length": 256}, 0)[0] == 256
    # transformers' "no limit declared" placeholder is no limit
    assert sequence_limit({"max_position_embeddings": 512}, {"model_max_length": int(1e30)}, 0)[0] == 512
    # DeBERTa-v2 without absolute positions: only the tokenizer bounds it
    assert sequence_limit({"max_position_embeddings": 512, "position_biased_input": False}, {}, 0) == (
        None,
        "",
    )


def test_the_bundled_model_accepts_its_own_limit_and_refuses_past_it() -> None:
    assert check_model(parse_spec({"name": "x", "model": {"max_sequence_length": 512}}).model, s3=None)
    with pytest.raises(SpecInvalid, match="512 tokens"):
        check_model(parse_spec({"name": "x", "model": {"max_sequence_length": 513}}).model, s3=None)


def test_spec_bounds_agree_with_the_service_model() -> None:
    from workflows.hosting.spec_bases import SERVERLESS_MEMORY_MB
    from workflows.hosting.specs import InferenceComponentHosting, ServerlessHosting

    def field_bounds(model: Any, name: str) -> tuple[Any, Any]:
        meta = model.model_fields[name].metadata
        low = next(
            (getattr(m, a) for m in meta for a in ("ge", "gt") if getattr(m, a, None) is not None), None
        )
        return low, next((m.le for m in meta if getattr(m, "le", None) is not None), None)

    assert field_bounds(ServerlessHosting, "max_concurrency") == enums.bounds("ServerlessMaxConcurrency")
    assert (min(SERVERLESS_MEMORY_MB), max(SERVERLESS_MEMORY_MB)) == enums.bounds("ServerlessMemorySizeInMB")
    assert field_bounds(InferenceComponentHosting, "cpu_cores")[0] == enums.bounds("NumberOfCpuCores")[0]
    assert field_bounds(InferenceComponentHosting, "min_memory_mb")[0] == enums.bounds("MemoryInMb")[0]
    assert field_bounds(InferenceComponentHosting, "startup_health_check_timeout_s") == enums.bounds(
        "ProductionVariantContainerStartupHealthCheckTimeoutInSeconds"
    )


def test_instance_type_fallbacks_are_checked_for_their_use() -> None:
    # ml.inf2 serves endpoints but runs no processing job
    assert enums.refusal("ml.inf2.xlarge", enums.ENDPOINT_INSTANCE) is None
    assert "processing jobs" in (enums.refusal("ml.inf2.xlarge", enums.PROCESSING_INSTANCE) or "")
    assert enums.closest("ml.g5.xlarg", enums.ENDPOINT_INSTANCE)[0] == "ml.g5.xlarge"


@pytest.mark.parametrize(
    ("line", "blocks"),
    [
        ("transformers==4.30.0", True),
        ("transformers<4.40", True),
        ("transformers>=4.51,<5", False),
        ("transformers", False),
    ],
)
def test_a_transformers_pin_the_image_does_not_satisfy_blocks(line: str, blocks: bool) -> None:
    image = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-inference:2.6.0-transformers4.51.3-cpu-py312-ubuntu22.04"
    findings = check_library_pins(requirements=f"onnxruntime==1.20.0\n{line}\n", image=image)
    assert [f.id for f in findings] == (["F28"] if blocks else [])


def test_version_specifiers() -> None:
    assert satisfies("4.51.3", "~=", "4.51.0") and not satisfies("4.52.0", "~=", "4.51.0")
    assert satisfies("4.51.3", "==", "4.51.*") and not satisfies("4.51.3", "!=", "4.51.3")


def test_an_execution_started_with_a_bad_spec_fails_at_check_spec_by_name(tmp_path: Path) -> None:
    from workflows.execution.pipeline import follow
    from workflows.local.engine import LocalEngine

    # Given an input as someone might paste it into the console: a misspelt instance type
    spec = {"name": "console", "hosting": {"instance_type_fallbacks": ["ml.c6i.xlargee"]}}
    with LocalEngine(workdir=tmp_path / "engine", time_scale=200.0) as engine:
        # When the deploy pipeline is started with it
        arn = engine.start_execution(
            "deploy_pipeline", {"run_id": "console-1", "spec": spec}, name="console-1"
        )
        outcome = follow(engine.client("stepfunctions"), arn, poll_s=0.2, timeout_s=300)
        created = dict(engine.sagemaker.models) if engine.sagemaker else {"?": 1}
    # Then the first state refuses it by name, nothing is converted, and the run fails with that error
    assert outcome.status == "FAILED"
    assert (outcome.error, outcome.states[:2]) == ("SpecInvalid", ["CheckSpec", "DiagnoseFailure"])
    assert "hosting.instance_type_fallbacks[0]: 'ml.c6i.xlargee'" in (outcome.cause or "")
    assert "did you mean 'ml.c6i.xlarge'" in (outcome.cause or "")
    assert "ConvertToOnnx" not in outcome.states
    assert outcome.states[-1] == "PipelineFailed"
    assert created == {}
