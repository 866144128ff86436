"""Container image URIs by family, build, device and region, read from ``data/images.yaml``.

That file is generated from the SageMaker Python SDK's image table (``workflows/images/sdk.py``):
repositories, tags and each region's registry account are the SDK's, never typed by hand.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib.resources import files
from typing import Any

import yaml

from workflows.errors import SpecInvalid

HF_INFERENCE = "huggingface-pytorch-inference"
DJL_INFERENCE = "djl-inference"
TRITON = "sagemaker-tritonserver"
VLLM = "vllm"


@lru_cache(maxsize=1)
def image_table() -> dict[str, Any]:
    """The parsed ``workflows/data/images.yaml``."""
    return yaml.safe_load((files("workflows") / "data" / "images.yaml").read_text(encoding="utf-8"))


def image_records(node: Any = None) -> list[dict[str, Any]]:
    """Every image entry of the table (a mapping with a ``repository``), whatever the nesting."""
    node = image_table() if node is None else node
    if isinstance(node, dict):
        found = [node] if "repository" in node else []
        return found + [r for value in node.values() for r in image_records(value)]
    if isinstance(node, list):
        return [r for value in node for r in image_records(value)]
    return []


def family_entry(family: str) -> dict[str, Any]:
    """A family's ``default``, ``note`` and ``builds``.

    Raises:
        SpecInvalid: the table has no such family.
    """
    entry = image_table()["families"].get(family)
    if entry is None:
        raise SpecInvalid(
            f"workflows/data/images.yaml has no image family {family!r}.",
            fix=f"use one of {', '.join(image_table()['families'])}",
        )
    return dict(entry)


def build_versions(family: str) -> list[str]:
    """The family's offered builds, the default first."""
    entry = family_entry(family)
    return [entry["default"], *(v for v in entry["builds"] if v != entry["default"])]


def build(family: str, version: str | None = None) -> tuple[str, dict[str, Any]]:
    """``(version, build)`` for the named build, or the family's default.

    Raises:
        SpecInvalid: naming ``hosting.image_version``, the value and the builds on offer.
    """
    entry = family_entry(family)
    chosen = str(version or entry["default"])
    found = entry["builds"].get(chosen)
    if found is None:
        raise SpecInvalid(
            f"hosting.image_version {chosen!r} is not a {family} build in workflows/data/images.yaml.",
            fix=f"use one of {', '.join(build_versions(family))} (default {entry['default']}), or set "
            "hosting.image to a full image URI",
        )
    return chosen, dict(found)


def image_entry(family: str, *, gpu: bool, version: str | None = None) -> dict[str, Any]:
    """The table's entry for a family, build and device.

    Raises:
        SpecInvalid: the build is unknown, or has no image for that device.
    """
    device = "gpu" if gpu else "cpu"
    chosen, found = build(family, version)
    entry = found.get(device)
    if entry is None:
        raise SpecInvalid(
            f"workflows/data/images.yaml has no {device.upper()} image of {family} {chosen} (the SageMaker "
            "SDK's image table lists none).",
            fix=f"use a {'CPU' if gpu else 'GPU'} instance type, or set hosting.image",
        )
    return dict(entry)


def registry_account(region: str) -> str:
    """The registry account of a region's AWS images (763104351884 in most commercial regions).

    Raises:
        SpecInvalid: the SDK's table lists no registry for the region.
    """
    accounts = image_table()["accounts"]
    if region not in accounts:
        raise SpecInvalid(
            f"region {region!r} has no image registry in the SageMaker SDK's image table.",
            fix=f"use one of {', '.join(sorted(accounts))}",
        )
    return str(accounts[region])


def registry_accounts() -> list[str]:
    """Every registry account of the table (all regions): the role must pull from each."""
    return sorted(set(map(str, image_table()["accounts"].values())))


@lru_cache(maxsize=64)
def dns_suffix(region: str) -> str:
    """The partition's DNS suffix (``amazonaws.com``, ``amazonaws.com.cn``, ...), from botocore's data."""
    from botocore.loaders import create_loader

    for partition in create_loader().load_data("endpoints")["partitions"]:
        if region in partition.get("regions", {}) or re.match(partition["regionRegex"], region):
            return str(partition["dnsSuffix"])
    return "amazonaws.com"


def image_uri(family: str, *, gpu: bool, region: str, version: str | None = None) -> str:
    """``<account>.dkr.ecr.<region>.<suffix>/<repository>:<tag>`` for a family, build and device.

    Raises:
        SpecInvalid: unknown build, no image for the device, or the build is not published in ``region``.
    """
    chosen, found = build(family, version)
    entry = image_entry(family, gpu=gpu, version=chosen)
    if region not in found["regions"]:
        raise SpecInvalid(
            f"{family} {chosen} is not published in {region} (the SageMaker SDK's image table lists "
            f"{len(found['regions'])} regions for it).",
            fix=f"deploy in one of {', '.join(found['regions'])}, or set hosting.image to an image your "
            "region serves",
        )
    return f"{registry_account(region)}.dkr.ecr.{region}.{dns_suffix(region)}/{entry['repository']}:{entry['tag']}"


def repository_of(uri: str) -> str:
    """The repository name of an image URI (``.../huggingface-pytorch-inference:tag`` -> the name)."""
    return uri.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]


_CUDA_TAG = re.compile(r"cu(\d{2})(\d)\b")
_CUDA_WORD = re.compile(r"cuda[-_]?(\d{2})\.(\d)")


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
