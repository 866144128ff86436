"""The real-time HF DLC mode's checks: F01, F02, F03, F07, F20, F22, F28 and instance-type sanity.

``ONNX_ARTIFACT_CHECKS`` cover any mode that serves the ONNX artifact with ``code/inference.py``
on the HF DLC (serverless registers them too).
"""

from __future__ import annotations

from workflows.contracts import Finding
from workflows.hosting.base import image_for
from workflows.images import HF_INFERENCE
from workflows.preflight.artifact import (
    check_artifact_complete,
    check_input_names,
    check_requirements,
    serving_code_filters_inputs,
    tokenizer_outputs,
)
from workflows.preflight.containers import check_cuda_driver
from workflows.preflight.context import PreflightContext
from workflows.preflight.instances import check_instance_types, instance
from workflows.preflight.library_versions import check_tokenizer_portability
from workflows.preflight.memory import check_instance_memory, check_startup_timeout
from workflows.preflight.pins import check_library_pins
from workflows.preflight.registry import Check, register
from workflows.spec import RealtimeHosting, is_gpu_instance

MODE = "realtime"


def _hosting(context: PreflightContext) -> RealtimeHosting:
    hosting = context.spec.hosting
    assert isinstance(hosting, RealtimeHosting)
    return hosting


def _as_fallback(findings: list[Finding], instance_type: str) -> list[Finding]:
    """A fallback type is used only after a capacity stall: its problems warn, they do not block."""
    return [
        f.model_copy(update={"severity": "warning", "message": f"fallback {instance_type}: {f.message}"})
        for f in findings
    ]


def instance_types(context: PreflightContext) -> list[Finding]:
    hosting = _hosting(context)
    return check_instance_types(hosting.instance_type_fallbacks, image=hosting.image)


def instance_memory(context: PreflightContext) -> list[Finding]:
    hosting = _hosting(context)
    assert context.model_mb is not None
    findings: list[Finding] = []
    for position, name in enumerate(hosting.instance_type_fallbacks):
        row = instance(name)
        if row is None:
            continue
        found = check_instance_memory(instance=row, model_mb=context.model_mb, workers=hosting.workers)
        findings.extend(found if position == 0 else _as_fallback(found, name))
    return findings


def startup_timeout(context: PreflightContext) -> list[Finding]:
    hosting = _hosting(context)
    assert context.model_mb is not None
    return check_startup_timeout(
        model_mb=context.model_mb,
        startup_timeout_s=hosting.startup_health_check_timeout_s,
        server_timeout_s=hosting.model_server_timeout_s,
    )


def cuda_driver(context: PreflightContext) -> list[Finding]:
    hosting = _hosting(context)
    findings: list[Finding] = []
    for position, name in enumerate(hosting.instance_type_fallbacks):
        if not is_gpu_instance(name):
            continue
        image = image_for(HF_INFERENCE, hosting, name, context.region)
        found = check_cuda_driver(instance_type=name, image=image, ami_version=hosting.inference_ami_version)
        findings.extend(found if position == 0 else _as_fallback(found, name))
    return findings


def requirements(context: PreflightContext) -> list[Finding]:
    artifact = context.artifact
    assert artifact is not None
    code = artifact.code
    if code is None:
        return [
            Finding(
                id="F22",
                severity="blocking",
                message="the artifact has no code/inference.py: the DLC would serve its default handler.",
                fix="run the convert step again",
                evidence=str(artifact.root),
            )
        ]
    found = check_requirements(
        code=code, requirements=artifact.requirements, local_modules=artifact.local_modules() - {"inference"}
    )
    return found + check_library_pins(requirements=artifact.requirements, image=_serving_image(context))


def _serving_image(context: PreflightContext) -> str:
    """The image that will run code/requirements.txt: the spec's, else the HF DLC for its device."""
    hosting = context.spec.hosting
    types = getattr(hosting, "instance_type_fallbacks", None) or []
    return image_for(HF_INFERENCE, hosting, types[0] if types else None, context.region)


def input_names(context: PreflightContext) -> list[Finding]:
    artifact = context.artifact
    assert artifact is not None
    emitted = tokenizer_outputs(artifact.tokenizer_dir) if artifact.tokenizer_dir.is_dir() else None
    if emitted is None:
        return [
            Finding(
                id="F03",
                severity="warning",
                message="the tokenizer's outputs could not be read (no tokenizer/ folder with a config), so "
                "they were not compared with the graph's inputs.",
                fix="ship the tokenizer under tokenizer/ in the artifact (the convert step does)",
                evidence=str(artifact.tokenizer_dir),
            )
        ]
    return check_input_names(
        tokenizer_outputs=emitted,
        graph_inputs=artifact.manifest.inputs,
        serving_filters=serving_code_filters_inputs(artifact.code or ""),
    )


def artifact_complete(context: PreflightContext) -> list[Finding]:
    artifact = context.artifact
    assert artifact is not None
    if artifact.verified_by:
        return []
    return check_artifact_complete(artifact.root)


def tokenizer_portability(context: PreflightContext) -> list[Finding]:
    artifact = context.artifact
    assert artifact is not None
    return check_tokenizer_portability(
        code=artifact.code or "",
        tokenizer_dir=artifact.tokenizer_dir,
        tokenizer=artifact.manifest.tokenizer,
        image=_serving_image(context),
    )


ONNX_ARTIFACT_CHECKS = (
    Check("artifact files complete and ONNX loads", ("F22",), artifact_complete, ("artifact",)),
    Check("serving code imports vs requirements.txt", ("F01", "F28"), requirements, ("artifact",)),
    Check("tokenizer outputs vs graph inputs", ("F03",), input_names, ("artifact",)),
    Check("tokenizer files vs the image's transformers", ("F35",), tokenizer_portability, ("artifact",)),
)

register(
    MODE,
    Check("instance types known", ("instance-type",), instance_types),
    Check("model x workers vs instance memory", ("F02", "F07"), instance_memory, ("model_size",)),
    Check("startup health check covers the model download", ("F07",), startup_timeout, ("model_size",)),
    Check("image CUDA vs the instance's GPU driver", ("F20",), cuda_driver),
    *ONNX_ARTIFACT_CHECKS,
)
