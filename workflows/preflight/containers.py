"""Container images: Docker labels (F05) and the CUDA they need from the instance's driver (F20).

Labels and CUDA versions come from ``workflows/data/images.yaml`` (entries may carry
``labels: {accept-bind-to-port: true, multi-models: true}`` and ``cuda: "12.4"``); an entry
without them is reported as unverifiable, never assumed fine.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Any

import yaml

from workflows.contracts import Finding
from workflows.images.table import image_cuda, image_label, repository_of
from workflows.preflight.instances import instance


@lru_cache(maxsize=1)
def _amis() -> dict[str, Any]:
    return yaml.safe_load((files("workflows") / "data" / "inference_amis.yaml").read_text(encoding="utf-8"))


def check_image_labels(*, images: list[str], label: str = "accept-bind-to-port") -> list[Finding]:
    """F05: multi-container endpoints need ``accept-bind-to-port=true`` on every image (multi-model
    endpoints need ``multi-models=true``); the vLLM SageMaker image has neither."""
    findings = []
    for uri in images:
        value = image_label(uri, label)
        if value is True:
            continue
        findings.append(
            Finding(
                id="F05",
                severity="blocking" if value is False else "warning",
                message=(
                    f"{repository_of(uri)} does not carry the {label}=true Docker label: CreateEndpoint "
                    f"answers 'does not contain required {label}=true Docker label'."
                    if value is False
                    else f"the image table does not say whether {repository_of(uri)} carries {label}=true."
                ),
                fix=(
                    "run this image as a standalone endpoint"
                    if value is False
                    else "read the label from the ECR image manifest's config (aws ecr batch-get-image) and "
                    "record it in workflows/data/images.yaml"
                ),
                evidence=uri,
            )
        )
    return findings


@dataclass(frozen=True)
class Ami:
    name: str
    driver: int
    cuda: tuple[int, int]


def _version(text: str) -> tuple[int, int]:
    major, minor = str(text).split(".")[:2]
    return int(major), int(minor)


def amis() -> list[Ami]:
    return [Ami(a["name"], int(a["driver"]), _version(a["cuda"])) for a in _amis()["amis"]]


def minimum_driver(cuda: tuple[int, int]) -> int | None:
    return _amis()["min_driver_for_cuda_major"].get(cuda[0])


def driver_cuda(driver: int) -> tuple[int, int] | None:
    native = _amis()["driver_cuda"].get(driver)
    return _version(native) if native else None


def minimum_ami(cuda: tuple[int, int]) -> Ami | None:
    """The oldest InferenceAmiVersion whose driver runs an image built for ``cuda``."""
    needed = minimum_driver(cuda)
    return next((a for a in amis() if needed is not None and a.driver >= needed), None)


def check_cuda_driver(*, instance_type: str, image: str, ami_version: str | None) -> list[Finding]:
    """F20: the instance's driver (the AMI's, or the family's default) must run the image's CUDA."""
    row = instance(instance_type)
    if row is None or row.accelerator_kind != "gpu":
        return []
    cuda = image_cuda(image)
    if cuda is None:
        return [
            Finding(
                id="F20",
                severity="warning",
                message=f"the CUDA version of {image} is unknown, so its driver needs cannot be checked.",
                fix="add cuda: to its entry in workflows/data/images.yaml, or set hosting.inference_ami_version",
                evidence=image,
            )
        ]
    chosen = next((a for a in amis() if a.name == ami_version), None)
    if ami_version and chosen is None:
        return [
            Finding(
                id="F20",
                severity="warning",
                message=f"InferenceAmiVersion {ami_version} is not in workflows/data/inference_amis.yaml.",
                fix="check the name against the ProductionVariant documentation",
                evidence=ami_version,
            )
        ]
    driver = chosen.driver if chosen else row.default_driver
    if driver is None:
        return [
            Finding(
                id="F20",
                severity="warning",
                message=f"the default GPU driver of {row.family} is not in the instance table, so whether it runs "
                f"{image} (CUDA {cuda[0]}.{cuda[1]}) cannot be checked.",
                fix=f"set hosting.inference_ami_version: {better.name} (driver {better.driver})"
                if (better := minimum_ami(cuda))
                else "set hosting.inference_ami_version to an AMI whose driver runs this CUDA",
                evidence=f"{instance_type}, no InferenceAmiVersion",
            )
        ]
    where = f"{chosen.name}" if chosen else f"the default AMI of {row.family}"
    shown = f"{cuda[0]}.{cuda[1]}"
    needed, better = minimum_driver(cuda), minimum_ami(cuda)
    if needed is None or driver < needed:
        return [
            Finding(
                id="F20",
                severity="blocking",
                message=f"{image} is built for CUDA {shown}; {where} has driver {driver}: the container stops "
                "with 'unsupported display driver / cuda driver combination (error 803)'.",
                fix=f"set hosting.inference_ami_version: {better.name} (driver {better.driver})"
                if better
                else "no listed AMI runs this CUDA: pick an image built for an older CUDA",
                evidence=f"image CUDA {shown}, driver {driver}",
            )
        ]
    native = driver_cuda(driver)
    if native is not None and native < cuda:
        return [
            Finding(
                id="F20",
                severity="warning",
                message=f"{image} (CUDA {shown}) runs on {where} (driver {driver}, CUDA "
                f"{native[0]}.{native[1]}) only through CUDA forward compatibility, which is not guaranteed.",
                fix="re-verify the deployment whenever the image tag changes"
                + (
                    f", or set hosting.inference_ami_version: {newer.name}"
                    if (newer := _native_ami(cuda))
                    else ""
                ),
                evidence=f"image CUDA {shown}, driver {driver}",
            )
        ]
    return []


def _native_ami(cuda: tuple[int, int]) -> Ami | None:
    return next((a for a in amis() if a.cuda >= cuda), None)
