"""LMI (DJL Serving, djl-inference): transformers in one container, several models on one GPU.

The container's folder (an uncompressed S3 prefix under the run's staging folder) holds
serving.properties, ``model.py`` (``artifacts/lmi/``), the list of models, each model's folder
(server-side copies of an s3:// source; a Hub id is downloaded by the container) and, on the CPU
image, requirements.txt: djl-inference *-cpu-full is Java-first and fails with "No module named
'transformers'" without it (F17). LMI loads models at the first request: the warmup absorbs it and
the cold start is reported apart (F18).
"""

from __future__ import annotations

import json
from functools import partial
from importlib.resources import files
from string import Template
from typing import TYPE_CHECKING, Any

from workflows.contracts import DeployRequest, Finding
from workflows.hosting.base import AwsClients, InstanceMode, Planned
from workflows.hosting.checks import INSTANCE_TYPES, cuda_check, spec_problem
from workflows.hosting.cohosted import MAIN_MODEL
from workflows.hosting.image_choice import image_for
from workflows.hosting.pools import POOLS
from workflows.hosting.sources import isolated_hub_ids, locate
from workflows.hosting.specs import LmiHosting
from workflows.hosting.staging import (
    StagedFile,
    copies_of_prefix,
    engine_uri,
    uncompressed_model_data,
    write_prefix,
)
from workflows.images.table import DJL_INFERENCE
from workflows.preflight.artifact import LMI_CPU_REQUIREMENTS, check_lmi_requirements
from workflows.preflight.context import PreflightContext
from workflows.preflight.findings import refuse_blocking
from workflows.preflight.isolation import ISOLATION
from workflows.preflight.registry import Check
from workflows.settings import Settings

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client

ENGINE = "lmi"
MODELS_FILE = "deploybench-models.json"
PREDICT_TIMEOUT_S = 60  # SageMaker cuts an invocation at 60 s anyway
# Loading several models (and downloading Hub ones) at the first request.
LOADING_TIMEOUT_S = 1800


def requirements(image: str, extra: list[str]) -> str | None:
    """requirements.txt: the field's packages on the CPU image (F17), plus a remediation's lines."""
    cpu = "cpu" in image.rsplit(":", 1)[-1]
    lines = [*(LMI_CPU_REQUIREMENTS if cpu else ()), *extra]
    return "\n".join(dict.fromkeys(lines)) + "\n" if lines else None


def model_entries(request: DeployRequest, hosting: LmiHosting) -> list[tuple[dict[str, Any], str | None]]:
    """(entry of deploybench-models.json, s3 prefix to copy under models/<name>/ or None)."""
    listed = [(MAIN_MODEL, request.spec.model.source, request.spec.model.task)] + [
        (m.name, m.source, m.task) for m in hosting.models
    ]
    found = []
    for name, source, task in listed:
        where = locate(source, mode="lmi")
        local = f"models/{name}"
        entry: dict[str, Any] = {
            "name": name,
            "source": local if where.kind == "s3" else where.value,
            "task": task,
        }
        if name == MAIN_MODEL:
            entry["max_length"] = request.spec.model.max_sequence_length
        found.append((entry, where.value if where.kind == "s3" else None))
    return found


def container_folder(
    request: DeployRequest, hosting: LmiHosting, image: str, *, s3: S3Client
) -> list[StagedFile]:
    """Every file of the container's folder."""
    properties = Template((files("artifacts") / "lmi" / "serving.properties").read_text(encoding="utf-8"))
    code = (files("artifacts") / "lmi" / "model.py").read_text(encoding="utf-8")
    entries = model_entries(request, hosting)
    staged = [
        StagedFile(
            "serving.properties",
            text=properties.substitute(
                dtype=hosting.dtype, predict_timeout=PREDICT_TIMEOUT_S, loading_timeout=LOADING_TIMEOUT_S
            ),
        ),
        StagedFile("model.py", text=code),
        StagedFile(MODELS_FILE, text=json.dumps({"models": [e for e, _ in entries]}, indent=2)),
    ]
    needed = requirements(image, request.attempt.overrides.extra_requirements)
    if needed is not None:
        staged.append(StagedFile("requirements.txt", text=needed))
    for entry, prefix in entries:
        if prefix is not None:
            staged.extend(copies_of_prefix(s3, prefix, str(entry["source"])))
    return staged


_image = partial(image_for, DJL_INFERENCE)


def _requirements(context: PreflightContext, hosting: LmiHosting) -> list[Finding]:
    image = _image(hosting, hosting.instance_type_fallbacks[0], context.region)
    return check_lmi_requirements(image=image, requirements=requirements(image, []))


def _sources(context: PreflightContext, hosting: LmiHosting) -> list[Finding]:
    sources = [context.spec.model.source, *(m.source for m in hosting.models)]
    found = spec_problem("model-source", lambda: [locate(s, mode="lmi") for s in sources])
    return found or isolated_hub_ids(hosting, sources, mode="lmi")


class LmiMode(InstanceMode[LmiHosting]):
    mode = "lmi"
    spec_type = LmiHosting
    image_family = DJL_INFERENCE
    # The SDK's table lists no CPU djl-inference image: LMI on CPU needs hosting.image.
    image_devices = ("gpu",)
    local_blocker = (
        "the local SageMaker serves only the HF inference DLC contract; DJL Serving (LMI) needs its own "
        "server image, and this machine runs no Docker"
    )
    checks = (
        INSTANCE_TYPES,
        POOLS,
        Check("the CPU image gets the model's Python packages", ("F17",), _requirements),
        Check(
            "every model is an s3:// prefix or a Hub id the container can load", ("model-source",), _sources
        ),
        Check("image CUDA vs the instance's GPU driver", ("F20",), cuda_check(_image)),
        ISOLATION,
    )

    def plan(
        self,
        request: DeployRequest,
        hosting: LmiHosting,
        instance_type: str,
        *,
        clients: AwsClients,
        settings: Settings,
    ) -> Planned[LmiHosting]:
        """Write the container's folder (F17: requirements on the CPU image) under the staging prefix."""
        image = _image(hosting, instance_type, settings.region)
        s3 = clients.need("s3")
        staged = container_folder(request, hosting, image, s3=s3)
        listed = next((s.text for s in staged if s.path == "requirements.txt"), None)
        refuse_blocking(check_lmi_requirements(image=image, requirements=listed), mode=self.mode)
        uri = engine_uri(settings.bucket, request.run_id, request.attempt.number, ENGINE)
        write_prefix(s3, uri, staged)
        return Planned(
            hosting,
            models=[{"PrimaryContainer": {"Image": image, "ModelDataSource": uncompressed_model_data(uri)}}],
            recorded={"staging_uris": [uri]},
        )


STRATEGY = LmiMode()
