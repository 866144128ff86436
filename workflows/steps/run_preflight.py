"""RunPreflight: the failure catalogue's static checks before any SageMaker resource exists.

All findings are reported together; a blocking finding fails the run before deploy, warnings are
carried in the result (and so into the report).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workflows.aws.storage import download_folder
from workflows.contracts import Finding, PreflightRequest, PreflightResult
from workflows.conversion.devices import device_spec
from workflows.errors import PreflightBlocked
from workflows.hosting.modes import run_checks
from workflows.preflight import ArtifactView, build_context
from workflows.preflight.findings import describe_findings

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

# Only what the checks read: the serving code and the tokenizer (kilobytes), not the weights,
# which PackArtifact verified file by file before uploading.
_ARTIFACT_PARTS = ("code/", "tokenizer/")


def _canary(request: PreflightRequest, *, s3: S3Client, result: PreflightResult) -> dict[str, Any] | None:
    """Local runs on the real stack: the packed artifact must answer in the image's environment (a failure
    blocks as the catalogue entry its error names, F35 for a tokenizer the container cannot read)."""
    from workflows.container.canary import pipeline_canary
    from workflows.diagnosis import diagnose, evidence_from_text

    region = os.environ.get("AWS_REGION", "us-east-1")
    mode = request.spec.hosting.mode  # the canary's error is read for the spec's hosting, as the run's are
    canary = pipeline_canary(request.spec, request.pack.model_data_uri, s3=s3, region=region)
    if canary is None:
        return None
    # Pools across devices: each further device's packed artifact, on that device's image.
    further = {
        packed.device: pipeline_canary(
            device_spec(request.spec, packed.device, several=True),
            packed.model_data_uri,
            s3=s3,
            region=region,
        )
        for packed in request.pack.device_artifacts
    }
    for label, tried in [
        ("the packed artifact", canary),
        *((f"the packed {d} artifact", c) for d, c in further.items()),
    ]:
        if tried is None or tried.outcome == "passed":
            continue
        named = diagnose(evidence_from_text(tried.error, origin="canary", hosting_mode=mode)).id
        result.findings.insert(
            0,
            Finding(
                id=named if named != "unknown" else "canary",
                severity="blocking",
                message=f"{label} failed in the container-equivalent environment: {tried.error[-600:]}",
                fix="fix the artifact (see the catalogue entry), or pick the image whose libraries it was built with",
                evidence=f"image {tried.image}; versions {tried.versions}",
            ),
        )
    found = canary.as_dict()
    if further:
        found["devices"] = {device: tried.as_dict() if tried else None for device, tried in further.items()}
    return found


def _device_checks(request: PreflightRequest, *, s3: S3Client, scratch: Path) -> PreflightResult:
    """Pools across devices: the artifact checks on each further device's artifact, against the spec
    narrowed to that device (its image, its onnxruntime), its findings and checks named by device."""
    found = PreflightResult()
    for converted in request.convert.device_artifacts:
        root = scratch / converted.device
        for part in _ARTIFACT_PARTS:
            download_folder(s3, converted.staging_uri.rstrip("/") + "/" + part, root / part)
        artifact = ArtifactView(
            root,
            converted.manifest,
            verified_by=f"PackArtifact verified {len(converted.manifest.files)} files",
        )
        spec = device_spec(request.spec, converted.device, several=True)
        result = run_checks(build_context(spec, artifact), "artifact")
        label = f"{converted.device} artifact: "
        found.findings += [f.model_copy(update={"message": label + f.message}) for f in result.findings]
        found.checked += [label + line for line in result.checked]
    return found


def preflight(request: PreflightRequest, *, s3: S3Client) -> PreflightResult:
    """Run every check that applies to the spec's hosting mode on the staged artifact.

    The checks on the spec alone ran in CheckSpec when ``request.spec_check`` is set: they are not run
    again, and their findings (warnings only: a blocking one stopped the run there) are carried over.

    Raises:
        PreflightBlocked: listing every blocking finding, then the warnings.
    """
    staging = request.convert.staging_uri.rstrip("/") + "/"
    manifest = request.convert.manifest
    with tempfile.TemporaryDirectory(prefix="deploybench-preflight-") as scratch:
        root = Path(scratch)
        for part in _ARTIFACT_PARTS:
            download_folder(s3, staging + part, root / part)
        artifact = ArtifactView(
            root,
            manifest,
            verified_by=f"PackArtifact verified {len(manifest.files)} files (size, sha256), loaded "
            f"{manifest.onnx_file} and packed sha256 {request.pack.sha256[:12]}",
        )
        carried = request.spec_check
        result = run_checks(build_context(request.spec, artifact), "artifact" if carried else "all")
        further = _device_checks(request, s3=s3, scratch=root / "devices")
        result.findings += further.findings
        result.checked += further.checked
    if carried is not None:
        result = PreflightResult(
            findings=sorted([*carried.findings, *result.findings], key=lambda f: f.severity != "blocking"),
            checked=[*carried.checked, *result.checked],
            skipped=[*carried.skipped, *result.skipped],
        )
    result.checked.append(f"F22 artifact files complete: {artifact.verified_by}")
    result.canary = _canary(request, s3=s3, result=result)
    blocking = [f for f in result.findings if f.severity == "blocking"]
    if blocking:
        warnings = [f for f in result.findings if f.severity == "warning"]
        raise PreflightBlocked(
            "preflight found problems that would fail on AWS:\n"
            + describe_findings(blocking)
            + (f"\nwarnings:\n{describe_findings(warnings)}" if warnings else "")
        )
    return result
