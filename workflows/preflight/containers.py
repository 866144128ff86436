"""Container images: Docker labels (F05) and the CUDA they need from the instance's driver (F20).

Labels and CUDA versions come from ``workflows/data/images.yaml`` (entries may carry
``labels: {accept-bind-to-port: true, multi-models: true}`` and ``cuda: "12.4"``); an entry
without them is reported as unverifiable, never assumed fine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Any

import yaml

from workflows.contracts import Finding
from workflows.images.table import image_records, repository_of
from workflows.preflight.instances import instance

_CUDA_TAG = re.compile(r"cu(\d{2})(\d)\b")
_CUDA_WORD = re.compile(r"cuda[-_]?(\d{2})\.(\d)")


@lru_cache(maxsize=1)
def _amis() -> dict[str, Any]:
    return yaml.safe_load((files("workflows") / "data" / "inference_amis.yaml").read_text(encoding="utf-8"))


def _tag_of(uri: str) -> str:
    return uri.rsplit(":", 1)[-1] if ":" in uri.rsplit("/", 1)[-1] else ""


def image_entries(uri: str) -> list[dict[str, Any]]:
    """Entries of the image table with the URI's repository (the tag's entry first when listed)."""
    repository, tag = repository_of(uri), _tag_of(uri)
    entries = [e for e in image_records() if e.get("repository") == repository]
    return sorted(entries, key=lambda e: e.get("tag") != tag)


def image_label(uri: str, label: str) -> bool | None:
    """The label's value from the image table; None when the table does not say."""
    for entry in image_entries(uri):
        labels = entry.get("labels") or {}
        if label in labels:
            return bool(labels[label])
    return None


def image_cuda(uri: str) -> tuple[int, int] | None:
    """The image's CUDA version from the table's ``cuda`` field or the tag (``cu124``, ``cuda12.4``)."""
    for entry in image_entries(uri):
        if entry.get("tag") == _tag_of(uri) and entry.get("cuda"):
            major, minor = str(entry["cuda"]).split(".")[:2]
            return int(major), int(minor)
    tag = _tag_of(uri)
    match = _CUDA_TAG.search(tag) or _CUDA_WORD.search(tag)
    return (int(match.group(1)), int(match.group(2))) if match else None


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
