"""``deploybench run`` on AWS: the pre-spend canary before the execution starts (``--skip-canary`` opts out).

The artifact is converted and packed here exactly as the pipeline's ConvertToOnnx and PackArtifact
steps do, then unpacked and asked once per task in the DLC-like environment of the image the spec
deploys (workflows/container/canary.py). A failure stops the command before any AWS resource exists,
naming the catalogue entry its error matches.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from workflows.cli.output import FAILED, fail, progress
from workflows.errors import NotServableLocally, PreflightBlocked
from workflows.spec.pipeline import BUNDLED_MODEL, RunSpec


def canary_before_start(spec: RunSpec, *, run_id: str, skip: bool, region: str) -> dict[str, Any]:
    """Convert, pack and canary ``spec``'s model locally; exits with FAILED when it does not answer.

    Returns:
        What ``result.json`` records under ``canary``: outcome (passed, skipped), seconds, versions.
    """
    if skip:
        progress().print("Pre-spend canary skipped (--skip-canary).")
        return {"outcome": "skipped", "reason": "--skip-canary"}
    source = spec.model.source
    if source != BUNDLED_MODEL and not Path(source).expanduser().is_dir():
        reason = f"model.source {source} is not a local folder: the artifact is first built on AWS"
        progress().print(f"Pre-spend canary skipped: {reason}.")
        return {"outcome": "skipped", "reason": reason}
    from workflows.artifact.tarball import write_tarball
    from workflows.container.canary import run_canary
    from workflows.container.environment import DlcUnavailable
    from workflows.contracts import StepRequest
    from workflows.conversion.build import build_artifact
    from workflows.conversion.source import resolve_source
    from workflows.diagnosis import diagnose, evidence_from_text
    from workflows.hosting.image_choice import image_for
    from workflows.images.table import HF_INFERENCE

    types = getattr(spec.hosting, "instance_type_fallbacks", None) or []
    image = image_for(HF_INFERENCE, spec.hosting, types[0] if types else None, region)
    progress().print(
        f"Pre-spend canary: converting and packing locally, then loading it as {image} would ..."
    )
    with tempfile.TemporaryDirectory(prefix="deploybench-canary-build-") as scratch:
        root = Path(scratch)
        folder = resolve_source(source, s3=None, workdir=root)
        build_artifact(
            StepRequest(run_id=run_id, spec=spec), source=folder, out=root / "artifact", scratch=root / "tmp"
        )
        tarball = root / "model.tar.gz"
        write_tarball(root / "artifact", tarball, spec.pack.compression)
        try:
            result = run_canary(tarball, image=image, task=str(spec.model.task))
        except DlcUnavailable as error:
            fail(
                f"the pre-spend canary cannot run here: {error}",
                code=FAILED,
                fix="install Java 8+ and let the DLC-like environment build, or pass --skip-canary",
                kind=NotServableLocally.__name__,
            )
    record = result.as_dict()
    if result.outcome != "passed":
        named = diagnose(evidence_from_text(result.error, origin="canary")).id
        fail(
            f"the packed artifact failed in the container-equivalent environment of {image} ({named}): "
            f"{result.error[-800:]}",
            code=FAILED,
            fix=f"see `deploybench catalogue {named}`; nothing was started on AWS",
            kind=PreflightBlocked.__name__,
        )
    progress().print(
        f"Pre-spend canary passed in {result.seconds:.1f} s (transformers {result.versions.get('transformers')})."
    )
    return record


def record_canary(results: Path, canary: dict[str, Any]) -> None:
    """Add the canary to the downloaded ``result.json`` (the AWS execution never saw it)."""
    path = results / "result.json"
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        data["canary"] = canary
        path.write_text(json.dumps(data, indent=1), encoding="utf-8")
