"""Preflight checks the hosting modes share, as functions of the preflight context.

Each mode registers the ones that apply to it from its own module (``register(MODE, Check(...))``),
with the check functions of ``workflows/preflight``. Instance-type checks run for every listed
type: the first one is deployed first, so its problems block; a fallback is only tried after a
capacity stall, so its problems warn.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from workflows.contracts import Finding
from workflows.errors import SpecInvalid
from workflows.preflight.containers import check_cuda_driver
from workflows.preflight.context import PreflightContext
from workflows.preflight.instances import check_instance_types, instance
from workflows.preflight.memory import check_instance_memory, check_startup_timeout
from workflows.preflight.registry import Check


def as_fallback(findings: list[Finding], instance_type: str) -> list[Finding]:
    return [
        f.model_copy(update={"severity": "warning", "message": f"fallback {instance_type}: {f.message}"})
        for f in findings
    ]


def each_instance_type(context: PreflightContext, check: Callable[[str], list[Finding]]) -> list[Finding]:
    """``check`` on every listed instance type: the first one's findings as they are, fallbacks' as warnings."""
    findings: list[Finding] = []
    for position, name in enumerate(context.spec.hosting.instance_type_fallbacks):  # type: ignore[union-attr]
        found = check(name)
        findings.extend(found if position == 0 else as_fallback(found, name))
    return findings


def instance_types(context: PreflightContext) -> list[Finding]:
    hosting: Any = context.spec.hosting
    return check_instance_types(list(hosting.instance_type_fallbacks), image=hosting.image)


def memory_check(containers: Callable[[Any], int]) -> Callable[[PreflightContext], list[Finding]]:
    """F02/F07: each instance's containers (``containers(hosting)``), their workers and ONNX sessions."""

    def run(context: PreflightContext) -> list[Finding]:
        hosting: Any = context.spec.hosting
        assert context.model_mb is not None
        model_mb = context.model_mb

        def one(name: str) -> list[Finding]:
            row = instance(name)
            if row is None:
                return []
            return check_instance_memory(
                instance=row, model_mb=model_mb, workers=hosting.workers, containers=containers(hosting)
            )

        return each_instance_type(context, one)

    return run


def startup_timeout(context: PreflightContext) -> list[Finding]:
    hosting: Any = context.spec.hosting
    assert context.model_mb is not None
    return check_startup_timeout(
        model_mb=context.model_mb,
        startup_timeout_s=hosting.startup_health_check_timeout_s,
        server_timeout_s=hosting.model_server_timeout_s,
    )


def cuda_check(image_for: Callable[[Any, str, str], str]) -> Callable[[PreflightContext], list[Finding]]:
    """F20: the image's CUDA against the instance's driver (its AMI's, or the family's default)."""

    def run(context: PreflightContext) -> list[Finding]:
        hosting: Any = context.spec.hosting

        def one(name: str) -> list[Finding]:
            row = instance(name)
            if row is None or row.accelerator_kind != "gpu":
                return []
            return check_cuda_driver(
                instance_type=name,
                image=image_for(hosting, name, context.region),
                ami_version=hosting.inference_ami_version,
            )

        return each_instance_type(context, one)

    return run


def containers_per_instance(copies: int, instances: int) -> int:
    return max(1, math.ceil(copies / max(1, instances)))


def spec_problem(finding_id: str, run: Callable[[], object]) -> list[Finding]:
    """A spec the mode cannot use (its SpecInvalid) as a blocking finding."""
    try:
        run()
    except SpecInvalid as error:
        return [
            Finding(
                id=finding_id, severity="blocking", message=error.message, fix=error.fix or "", evidence=""
            )
        ]
    return []


INSTANCE_TYPES = Check("instance types known", ("instance-type",), instance_types)
STARTUP_TIMEOUT = Check(
    "startup health check covers the model download", ("F07",), startup_timeout, ("model_size",)
)
