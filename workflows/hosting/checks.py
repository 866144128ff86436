"""Preflight checks the hosting modes share, as functions of the preflight context and the mode's
hosting settings.

Each mode lists the ones that apply to it in its ``checks``, next to its own, with the check
functions of ``workflows/preflight``. A shared check is typed by what it reads (a Protocol, or the
settings every mode on instances has), so any mode whose spec has those fields can list it.
Instance-type checks run for every listed type: the first one is deployed first, so its problems
block; a fallback is only tried after a capacity stall, so its problems warn.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from workflows.contracts import Finding
from workflows.errors import SpecInvalid
from workflows.hosting.image_choice import ImageChoice
from workflows.hosting.spec_bases import InstanceSettings
from workflows.preflight.containers import check_cuda_driver
from workflows.preflight.context import PreflightContext
from workflows.preflight.instances import check_instance_types, instance
from workflows.preflight.memory import check_download_timeout, check_instance_memory, check_startup_timeout
from workflows.preflight.registry import Check


class ServedOnInstances(Protocol):
    """The HF inference DLC's model server on instances: what the memory and start-up checks read."""

    @property
    def instance_type_fallbacks(self) -> Sequence[str]: ...

    @property
    def workers(self) -> int: ...

    @property
    def startup_health_check_timeout_s(self) -> int: ...

    @property
    def model_server_timeout_s(self) -> int: ...


ServedT = TypeVar("ServedT", bound=ServedOnInstances)


def as_fallback(findings: list[Finding], instance_type: str) -> list[Finding]:
    return [
        f.model_copy(update={"severity": "warning", "message": f"fallback {instance_type}: {f.message}"})
        for f in findings
    ]


def each_instance_type(types: Sequence[str], check: Callable[[str], list[Finding]]) -> list[Finding]:
    """``check`` on every listed instance type: the first one's findings as they are, fallbacks' as warnings."""
    findings: list[Finding] = []
    for position, name in enumerate(types):
        found = check(name)
        findings.extend(found if position == 0 else as_fallback(found, name))
    return findings


def instance_types(context: PreflightContext, hosting: InstanceSettings) -> list[Finding]:
    return check_instance_types(list(hosting.instance_type_fallbacks), image=hosting.image)


def memory_check(
    containers: Callable[[ServedT], int],
) -> Callable[[PreflightContext, ServedT], list[Finding]]:
    """F02/F07: each instance's containers (``containers(hosting)``), their workers and ONNX sessions."""

    def run(context: PreflightContext, hosting: ServedT) -> list[Finding]:
        assert context.model_mb is not None
        model_mb = context.model_mb

        def one(name: str) -> list[Finding]:
            row = instance(name)
            if row is None:
                return []
            return check_instance_memory(
                instance=row, model_mb=model_mb, workers=hosting.workers, containers=containers(hosting)
            )

        return each_instance_type(hosting.instance_type_fallbacks, one)

    return run


def startup_timeout(context: PreflightContext, hosting: ServedOnInstances) -> list[Finding]:
    assert context.model_mb is not None
    return check_startup_timeout(
        model_mb=context.model_mb,
        startup_timeout_s=hosting.startup_health_check_timeout_s,
        server_timeout_s=hosting.model_server_timeout_s,
    )


def download_timeout(context: PreflightContext, hosting: InstanceSettings) -> list[Finding]:
    assert context.model_mb is not None
    return check_download_timeout(
        artifact_mb=context.model_mb, timeout_s=hosting.model_data_download_timeout_s
    )


def cuda_check(
    image_for: Callable[[ImageChoice, str, str], str],
) -> Callable[[PreflightContext, InstanceSettings], list[Finding]]:
    """F20: the image's CUDA against the instance's driver (its AMI's, or the family's default)."""

    def run(context: PreflightContext, hosting: InstanceSettings) -> list[Finding]:
        def one(name: str) -> list[Finding]:
            row = instance(name)
            if row is None or row.accelerator_kind != "gpu":
                return []
            return check_cuda_driver(
                instance_type=name,
                image=image_for(hosting, name, context.region),
                ami_version=hosting.inference_ami_version,
            )

        return each_instance_type(hosting.instance_type_fallbacks, one)

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


INSTANCE_TYPES: Check[InstanceSettings] = Check("instance types known", ("instance-type",), instance_types)
STARTUP_TIMEOUT: Check[ServedOnInstances] = Check(
    "startup health check covers the model download", ("F07",), startup_timeout, ("model_size",)
)
DOWNLOAD_TIMEOUT: Check[InstanceSettings] = Check(
    "model data download timeout covers the artifact", ("F07",), download_timeout, ("model_size",)
)
