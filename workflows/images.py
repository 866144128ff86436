"""Container image URIs by family, device and region, read from ``data/images.yaml``."""

from __future__ import annotations

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
    return yaml.safe_load((files("workflows") / "data" / "images.yaml").read_text(encoding="utf-8"))


def image_entry(family: str, *, gpu: bool) -> dict[str, Any]:
    """The table's entry for a family and device.

    Raises:
        SpecInvalid: the table has no image of that family for that device.
    """
    device = "gpu" if gpu else "cpu"
    entry = (image_table()["families"].get(family) or {}).get(device)
    if entry is None:
        raise SpecInvalid(
            f"workflows/data/images.yaml has no {device.upper()} image of {family}.",
            fix=f"use a {'CPU' if gpu else 'GPU'} instance type, or set hosting.image",
        )
    return dict(entry)


def registry_account(region: str) -> str:
    """The DLC registry account of a region (763104351884 in most)."""
    table = image_table()
    return str((table.get("accounts") or {}).get(region, table["account"]))


def image_uri(family: str, *, gpu: bool, region: str) -> str:
    """``<account>.dkr.ecr.<region>.amazonaws.com/<repository>:<tag>`` for a family and device."""
    entry = image_entry(family, gpu=gpu)
    suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    account = entry.get("account") or registry_account(region)
    return f"{account}.dkr.ecr.{region}.{suffix}/{entry['repository']}:{entry['tag']}"


def repository_of(uri: str) -> str:
    """The repository name of an image URI (``.../huggingface-pytorch-inference:tag`` -> the name)."""
    return uri.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
