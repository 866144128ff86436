"""Convert step: Hugging Face folder -> verified ONNX artifact folder in S3 staging."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workflows.aws.storage import upload_folder
from workflows.contracts import ConvertResult, StepRequest
from workflows.conversion.build import build_artifact, fetch_source
from workflows.conversion.cache import CacheBounds, converted
from workflows.conversion.cache_stores import open_store
from workflows.conversion.manifest import MANIFEST_FILE
from workflows.naming import staging_prefix
from workflows.settings import Settings


def convert(
    request: StepRequest,
    *,
    s3: Any,
    settings: Settings,
    workdir: Path,
    secretsmanager: Any | None = None,
    environ: Mapping[str, str] = os.environ,
) -> ConvertResult:
    """Build the artifact folder under ``workdir`` (or take it from the conversion cache, when
    ``settings.conversion_cache`` names one) and upload it to the run's staging prefix.

    An ``hf://`` source is downloaded at the commit its revision names (``HF_TOKEN`` from ``environ``,
    else ``model.token_secret`` through ``secretsmanager``), and the commit goes into the manifest.
    The manifest goes up last: a staging prefix without it is refused by the pack step.
    """
    started = time.perf_counter()
    source, hub = fetch_source(
        request.spec.model, s3=s3, workdir=workdir, secretsmanager=secretsmanager, environ=environ
    )
    out = workdir / "artifact"
    scratch = workdir / "scratch"
    manifest, cache = converted(
        request,
        source=source,
        build=lambda: build_artifact(request, source=source, out=out, scratch=scratch, hub=hub),
        out=out,
        store=open_store(settings, s3=s3),
        bounds=CacheBounds.from_settings(settings),
        hub=hub.model_dump(mode="json") if hub else None,
    )
    staging_uri = f"s3://{settings.bucket}/{staging_prefix(request.run_id)}"
    upload_folder(s3, out, staging_uri, last=MANIFEST_FILE)
    return ConvertResult(
        staging_uri=staging_uri,
        manifest=manifest,
        seconds=round(time.perf_counter() - started, 3),
        cache=cache,
    )
