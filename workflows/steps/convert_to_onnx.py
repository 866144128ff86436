"""Convert step: Hugging Face folder -> verified ONNX artifact folder in S3 staging."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workflows.aws.storage import upload_folder
from workflows.contracts import (
    ArtifactManifest,
    ConversionCacheOutcome,
    ConvertedDevice,
    ConvertResult,
    StepRequest,
)
from workflows.conversion.build import SharedExport, build_artifact, fetch_source
from workflows.conversion.cache import CacheBounds, converted
from workflows.conversion.cache_stores import open_store
from workflows.conversion.devices import device_spec
from workflows.conversion.manifest import MANIFEST_FILE
from workflows.hosting.pool_devices import run_devices
from workflows.naming import device_staging_prefix, staging_prefix
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

    A real-time spec that pools CPU and GPU types gets one artifact per device (the first type's in
    the staging prefix, each further device's under its ``devices/<device>/`` folder), each from the
    same source and each through the cache under its own key.
    """
    started = time.perf_counter()
    source, hub = fetch_source(
        request.spec.model, s3=s3, workdir=workdir, secretsmanager=secretsmanager, environ=environ
    )
    store = open_store(settings, s3=s3)
    devices = run_devices(request.spec)
    shared: dict[str, SharedExport] = {}  # the devices' artifacts share one export

    def one(
        device: str, out: Path, scratch: Path, uri: str
    ) -> tuple[ArtifactManifest, ConversionCacheOutcome]:
        """The artifact for ``device``: the spec narrowed to it when the run converts for several."""
        spec = device_spec(request.spec, device, several=True) if len(devices) > 1 else request.spec
        narrowed = request.model_copy(update={"spec": spec})
        made = converted(
            narrowed,
            source=source,
            build=lambda: build_artifact(
                narrowed, source=source, out=out, scratch=scratch, hub=hub, shared=shared
            ),
            out=out,
            store=store,
            bounds=CacheBounds.from_settings(settings),
            hub=hub.model_dump(mode="json") if hub else None,
        )
        upload_folder(s3, out, uri, last=MANIFEST_FILE)
        return made

    staging_uri = f"s3://{settings.bucket}/{staging_prefix(request.run_id)}"
    manifest, cache = one(devices[0], workdir / "artifact", workdir / "scratch", staging_uri)
    further = []
    for device in devices[1:]:
        uri = f"s3://{settings.bucket}/{device_staging_prefix(request.run_id, device)}"
        made, outcome = one(device, workdir / f"artifact-{device}", workdir / f"scratch-{device}", uri)
        further.append(ConvertedDevice(device=device, staging_uri=uri, manifest=made, cache=outcome))  # type: ignore[arg-type]
    return ConvertResult(
        staging_uri=staging_uri,
        manifest=manifest,
        seconds=round(time.perf_counter() - started, 3),
        cache=cache,
        device_artifacts=further,
    )
