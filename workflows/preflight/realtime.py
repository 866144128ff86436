"""Checks of the modes that serve the ONNX artifact on the HF DLC: F01, F03, F20, F22, F28, F35, F40.

``ONNX_ARTIFACT_CHECKS`` cover any mode that serves the ONNX artifact with ``code/inference.py``
on the HF DLC (real-time, multi-container, serverless, inference components list them);
``cuda_driver`` is the real-time mode's F20 check.
"""

from __future__ import annotations

from workflows.contracts import Finding
from workflows.errors import SpecInvalid
from workflows.hosting.checks import each_instance_type
from workflows.hosting.image_choice import image_for
from workflows.hosting.pool_devices import pooled_fallbacks
from workflows.hosting.spec_bases import InstanceSettings
from workflows.images.table import HF_INFERENCE
from workflows.preflight.artifact import (
    check_artifact_complete,
    check_input_names,
    check_requirements,
    check_runtime_requirement,
    serving_code_filters_inputs,
    tokenizer_outputs,
)
from workflows.preflight.containers import check_cuda_driver
from workflows.preflight.context import PreflightContext
from workflows.preflight.isolation import ISOLATION
from workflows.preflight.library_versions import check_tokenizer_portability
from workflows.preflight.pins import check_library_pins
from workflows.preflight.positions import check_positions, position_rows
from workflows.preflight.registry import Check
from workflows.spec.pipeline import is_gpu_instance


def cuda_driver(context: PreflightContext, hosting: InstanceSettings) -> list[Finding]:
    """F20 for the HF DLC on every listed GPU instance type, known to the instance table or not."""

    def one(name: str) -> list[Finding]:
        if not is_gpu_instance(name):
            return []
        try:
            image = image_for(HF_INFERENCE, hosting, name, context.region)
        except SpecInvalid:
            if pooled_fallbacks(hosting):
                return []  # the pools check names the pool, its device and the region (pool_devices.py)
            raise
        return check_cuda_driver(instance_type=name, image=image, ami_version=hosting.inference_ami_version)

    return each_instance_type(hosting.instance_type_fallbacks, one)


def requirements(context: PreflightContext, hosting: object) -> list[Finding]:
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
    found += check_runtime_requirement(
        runtime=artifact.manifest.serving.runtime, requirements=artifact.requirements
    )
    return found + check_library_pins(requirements=artifact.requirements, image=_serving_image(context))


def _serving_image(context: PreflightContext) -> str:
    """The image that will run code/requirements.txt: the spec's, else the HF DLC for its device."""
    hosting = context.spec.hosting
    types = getattr(hosting, "instance_type_fallbacks", None) or []
    return image_for(HF_INFERENCE, hosting, types[0] if types else None, context.region)


def input_names(context: PreflightContext, hosting: object) -> list[Finding]:
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


def artifact_complete(context: PreflightContext, hosting: object) -> list[Finding]:
    artifact = context.artifact
    assert artifact is not None
    if artifact.verified_by:
        return []
    return check_artifact_complete(artifact.root)


def tokenizer_portability(context: PreflightContext, hosting: object) -> list[Finding]:
    artifact = context.artifact
    assert artifact is not None
    return check_tokenizer_portability(
        code=artifact.code or "",
        tokenizer_dir=artifact.tokenizer_dir,
        tokenizer=artifact.manifest.tokenizer,
        image=_serving_image(context),
    )


def positions(context: PreflightContext, hosting: object) -> list[Finding]:
    artifact = context.artifact
    assert artifact is not None
    manifest = artifact.manifest
    graph = artifact.root / manifest.onnx_file
    return check_positions(
        code=artifact.code or "",
        max_sequence_length=manifest.max_sequence_length,
        rows=position_rows(graph) if graph.is_file() else None,
        architecture=manifest.architecture,
    )


ONNX_ARTIFACT_CHECKS: tuple[Check[object], ...] = (
    Check("artifact files complete and ONNX loads", ("F22",), artifact_complete, ("artifact",)),
    Check("serving code imports vs requirements.txt", ("F01", "F28"), requirements, ("artifact",)),
    Check("tokenizer outputs vs graph inputs", ("F03",), input_names, ("artifact",)),
    Check("tokenizer files vs the image's transformers", ("F35",), tokenizer_portability, ("artifact",)),
    Check("serving code truncates within the graph's positions", ("F40",), positions, ("artifact",)),
    ISOLATION,
)
