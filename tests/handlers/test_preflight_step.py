"""The preflight step on a staged artifact in moto's S3, and the checks the modes declare."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fast_spec
from tests.support.aws import Aws
from tests.support.hosting import spec_with
from workflows.aws.storage import upload_folder
from workflows.contracts import (
    ConvertedDevice,
    ConvertResult,
    FileEntry,
    PackedDevice,
    PackResult,
    PreflightRequest,
)
from workflows.conversion.manifest import read_manifest
from workflows.errors import PreflightBlocked
from workflows.hosting import modes
from workflows.hosting.modes import strategies, strategy_for
from workflows.hosting.serverless import ServerlessMode
from workflows.hosting.specs import ServerlessHosting
from workflows.preflight import registry
from workflows.preflight.context import ArtifactView, PreflightContext, build_context
from workflows.steps.run_preflight import preflight

BUCKET = "preflight-bucket"
STAGING = f"s3://{BUCKET}/staging/pf-1/"


@pytest.fixture
def aws_bucket() -> str:
    return BUCKET


@pytest.fixture
def s3(aws: Aws) -> Any:
    return aws.s3


def staged(s3: Any, artifact: Path, tmp_path: Path, *, requirements: str | None = None) -> ConvertResult:
    root = tmp_path / "staged"
    shutil.copytree(artifact, root)
    if requirements is not None:
        (root / "code" / "requirements.txt").write_text(requirements, encoding="utf-8")
    upload_folder(s3, root, STAGING)
    return ConvertResult(staging_uri=STAGING, manifest=read_manifest(artifact), seconds=1.0)


PACK = PackResult(
    model_data_uri=f"s3://{BUCKET}/artifacts/pf-1/model.tar.gz",
    size_bytes=1,
    sha256="ab" * 32,
    compression="gzip-isal-1",
    seconds=0.1,
)


def test_a_clean_artifact_passes_and_says_what_was_checked(
    s3: Any, tiny_artifact: Path, tmp_path: Path
) -> None:
    # Given the converted tiny model staged in S3
    request = PreflightRequest(
        run_id="pf-1", spec=fast_spec("bundled"), convert=staged(s3, tiny_artifact, tmp_path), pack=PACK
    )
    # When the preflight step runs
    result = preflight(request, s3=s3)
    # Then there is no blocking finding, every real-time check ran, none was skipped
    assert [f for f in result.findings if f.severity == "blocking"] == []
    ran = " ".join(result.checked)
    for entry in ("F01", "F02", "F03", "F07", "F20", "F22", "F28", "instance-type"):
        assert entry in ran
    assert result.skipped == []
    assert any("PackArtifact verified" in line for line in result.checked)


def test_every_blocking_finding_is_reported_at_once(s3: Any, tiny_artifact: Path, tmp_path: Path) -> None:
    # Given requirements without onnxruntime but with optimum, and the field's 8 workers on ml.c6i.2xlarge
    # for a model the size of the field's mDeBERTa (1137 MB)
    convert = staged(s3, tiny_artifact, tmp_path, requirements="optimum[onnxruntime]>=1.20\n")
    big = [
        FileEntry(path=f.path, size_bytes=1137 * 1024 * 1024, sha256=f.sha256)
        if f.path == convert.manifest.onnx_file
        else f
        for f in convert.manifest.files
    ]
    convert = convert.model_copy(update={"manifest": convert.manifest.model_copy(update={"files": big})})
    spec = fast_spec("bundled", hosting={"instance_type_fallbacks": ["ml.c6i.2xlarge"], "workers": 8})
    request = PreflightRequest(run_id="pf-1", spec=spec, convert=convert, pack=PACK)
    # When the preflight step runs
    with pytest.raises(PreflightBlocked) as raised:
        preflight(request, s3=s3)
    # Then one error names F01, F02 and F28 together, each with its fix
    message = str(raised.value)
    for entry in ("F01 (blocking)", "F02 (blocking)", "F28 (blocking)"):
        assert entry in message
    assert "SAGEMAKER_MODEL_SERVER_WORKERS=1" in message


def test_accepted_findings_are_reported_as_warnings_and_the_rest_still_block(
    s3: Any, tiny_artifact: Path, tmp_path: Path
) -> None:
    # Given the field's 8 workers (F02) and optimum (F01, F28), with F02 accepted by the spec
    convert = staged(s3, tiny_artifact, tmp_path, requirements="optimum[onnxruntime]>=1.20\n")
    big = [
        f.model_copy(update={"size_bytes": 1137 * 1024 * 1024}) if f.path == convert.manifest.onnx_file else f
        for f in convert.manifest.files
    ]
    convert = convert.model_copy(update={"manifest": convert.manifest.model_copy(update={"files": big})})
    hosting = {"instance_type_fallbacks": ["ml.c6i.2xlarge"], "workers": 8}
    spec = fast_spec("bundled", hosting=hosting, preflight={"accept": ["F02"]})
    # When the preflight step runs
    with pytest.raises(PreflightBlocked) as raised:
        preflight(PreflightRequest(run_id="pf-1", spec=spec, convert=convert, pack=PACK), s3=s3)
    # Then F02 is listed among the warnings, marked as accepted, and F01/F28 still block
    blocking, warnings = str(raised.value).split("\nwarnings:\n")
    assert "F02" not in blocking and "F01 (blocking)" in blocking and "F28 (blocking)" in blocking
    assert "F02 (warning): accepted by preflight.accept: " in warnings
    # And with every blocking ID accepted the step passes, carrying them as warnings
    spec = fast_spec("bundled", hosting=hosting, preflight={"accept": ["F01", "F02", "F28"]})
    result = preflight(PreflightRequest(run_id="pf-1", spec=spec, convert=convert, pack=PACK), s3=s3)
    assert {f.id for f in result.findings} >= {"F01", "F02", "F28"}
    assert all(f.severity == "warning" for f in result.findings)


def test_accept_takes_failure_ids_only() -> None:
    from workflows.errors import SpecInvalid

    with pytest.raises(SpecInvalid, match="preflight.accept"):
        fast_spec("bundled", preflight={"accept": ["memory"]})


def test_spec_only_context_estimates_the_model_from_the_source_weights() -> None:
    # Given the bundled MiniLM and no artifact
    context = build_context(fast_spec("bundled"))
    # Then the size comes from its safetensors (about 90 MB) and the artifact checks are skipped
    assert context.model_mb is not None and 50 < context.model_mb < 150
    assert "source weights" in context.model_mb_from
    result = modes.run_checks(context)
    assert any("needs the artifact" in line for line in result.skipped)


def test_the_artifact_view_reads_the_onnx_size_from_the_manifest(tiny_artifact: Path) -> None:
    view = ArtifactView(tiny_artifact, read_manifest(tiny_artifact))
    onnx = tiny_artifact / view.manifest.onnx_file
    # Then the size the memory checks use is the ONNX file's
    assert view.model_mb == pytest.approx(onnx.stat().st_size / (1024 * 1024))


def test_a_hosting_mode_declares_its_checks_and_the_preflight_runs_those(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a serverless mode that declares one check more, as a new hosting module would
    seen: list[int] = []

    def no_gpu_serverless(context: Any, hosting: ServerlessHosting) -> list[Any]:
        seen.append(hosting.memory_size_mb)
        return []

    check = registry.Check("no GPU on serverless", ("F14",), no_gpu_serverless)

    class Extended(ServerlessMode):
        checks = (*ServerlessMode.checks, check)

    monkeypatch.setitem(strategies(), "serverless", Extended())
    spec = spec_with("bundled", {"mode": "serverless", "memory_size_mb": 4096})
    # When the checks on the spec alone run
    result = modes.run_checks(PreflightContext(spec), "spec")
    # Then the declared check ran once, on the mode's own typed settings, and real-time does not list it
    assert seen == [4096]
    assert result.checked == [check.label]
    assert check not in strategy_for("realtime").checks
    # And a check declaring an unknown need is refused at definition
    with pytest.raises(ValueError, match="needs"):
        registry.Check("bad", ("F01",), no_gpu_serverless, ("gpu",))


def test_each_device_artifact_of_pools_across_devices_gets_the_artifact_checks(
    s3: Any, tiny_artifact: Path, tmp_path: Path
) -> None:
    # Given a CPU type first and a GPU type after it, pooled: the CPU artifact is the run's first
    # (clean), the GPU one is staged under devices/gpu/ without code/inference.py
    spec = spec_with(
        "bundled", {"mode": "realtime", "instance_type_fallbacks": ["ml.c6i.xlarge", "ml.g5.xlarge"]}
    )
    convert = staged(s3, tiny_artifact, tmp_path)
    broken = tmp_path / "gpu"
    shutil.copytree(tiny_artifact, broken)
    (broken / "code" / "inference.py").unlink()
    gpu_uri = f"{STAGING}devices/gpu/"
    upload_folder(s3, broken, gpu_uri)
    device = ConvertedDevice(device="gpu", staging_uri=gpu_uri, manifest=convert.manifest)
    request = PreflightRequest(
        run_id="pf-1", spec=spec, convert=convert.model_copy(update={"device_artifacts": [device]}), pack=PACK
    )
    # When the preflight step runs, Then the GPU artifact's missing serving code blocks, named as its
    with pytest.raises(
        PreflightBlocked, match=r"F22 \(blocking\): gpu artifact: the artifact has no code/inference.py"
    ):
        preflight(request, s3=s3)
    # And with its serving code back, it is checked against the GPU type: a CPU onnxruntime there blocks (F36)
    upload_folder(s3, tiny_artifact, gpu_uri)
    with pytest.raises(
        PreflightBlocked, match=r"F36 \(blocking\): gpu artifact: ml.g5.xlarge is a GPU instance"
    ) as caught:
        preflight(request, s3=s3)
    # And the first (CPU) artifact passes its own checks
    assert "ml.c6i.xlarge" not in str(caught.value)


def test_a_device_artifact_that_fails_its_canary_blocks_named_by_device(
    s3: Any, tiny_artifact: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workflows.container import canary

    # Given the canary's outcome per packed artifact (the real canary needs the container stack; the
    # e2e tier runs it): the run's first passes, the CPU artifact's raises in the image's environment
    asked: dict[str, str] = {}

    def outcome(spec: Any, uri: str, **_: Any) -> canary.CanaryResult:
        asked[uri] = spec.hosting.instance_type_fallbacks[0]
        failed = "/cpu/" in uri
        error = "ModuleNotFoundError: No module named 'onnxruntime'" if failed else ""
        return canary.CanaryResult(
            outcome="failed" if failed else "passed", seconds=1.0, image="img", error=error
        )

    monkeypatch.setattr(canary, "pipeline_canary", outcome)
    spec = spec_with(
        "bundled", {"mode": "realtime", "instance_type_fallbacks": ["ml.g5.xlarge", "ml.c6i.xlarge"]}
    )
    cpu = PackedDevice(device="cpu", model_data_uri=f"s3://{BUCKET}/artifacts/pf-1/cpu/model.tar.gz", size_bytes=1, sha256="cd" * 32, onnx_file="model.onnx", precision="fp32")  # fmt: skip
    pack = PACK.model_copy(update={"device_artifacts": [cpu]})
    request = PreflightRequest(
        run_id="pf-1", spec=spec, convert=staged(s3, tiny_artifact, tmp_path), pack=pack
    )
    # When the preflight step runs, Then the CPU artifact's failure blocks, named as that artifact's (F01)
    with pytest.raises(PreflightBlocked, match=r"F01 \(blocking\): the packed cpu artifact failed"):
        preflight(request, s3=s3)
    # And each artifact was loaded for its own device's first type
    assert asked == {PACK.model_data_uri: "ml.g5.xlarge", cpu.model_data_uri: "ml.c6i.xlarge"}
