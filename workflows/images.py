"""Container image URIs by family and device, read from ``data/images.yaml``."""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from typing import Any

import yaml

HF_INFERENCE = "huggingface-pytorch-inference"


@lru_cache(maxsize=1)
def image_table() -> dict[str, Any]:
    return yaml.safe_load((files("workflows") / "data" / "images.yaml").read_text(encoding="utf-8"))


def image_uri(family: str, *, gpu: bool, region: str) -> str:
    """``<account>.dkr.ecr.<region>.amazonaws.com/<repository>:<tag>`` for a family and device."""
    table = image_table()
    entry = table["families"][family]["gpu" if gpu else "cpu"]
    return f"{table['account']}.dkr.ecr.{region}.amazonaws.com/{entry['repository']}:{entry['tag']}"


def repository_of(uri: str) -> str:
    """The repository name of an image URI (``.../huggingface-pytorch-inference:tag`` -> the name)."""
    return uri.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
