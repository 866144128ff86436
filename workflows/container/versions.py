"""The library versions of the image a local container stands in for, read from the image table.

``workflows/data/images.yaml`` (generated from sagemaker-core's image_uri_config) lists each HF
inference build as ``huggingface <transformers> (pytorch<torch>)`` with a tag such as
``2.6.0-transformers4.51.3-cpu-py312-ubuntu22.04``: those give transformers, torch and Python. The
DLC-like environment installs that transformers exactly (tokenizers follows from it, as in the
image). What this machine cannot mirror is said, not hidden: torch stays the one CPU build on this
machine's disk (no other torch can be had here) and Python is the interpreter running deploybench;
the inference toolkit's version is not in the SDK's table, so the one known to run the DLC's Multi
Model Server 1.1.11 is used and recorded as such.
"""

from __future__ import annotations

import re
import sys
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from workflows.images.table import HF_INFERENCE, family_entry, image_table

TOOLKIT = "2.6.0"
TOOLKIT_SOURCE = "not in the SDK's image table; 2.6.0 is the release run with Multi Model Server 1.1.11"
TOOLKIT_TRANSFORMERS_CEILING = "4.57.6"
"""The newest transformers the published toolkit imports under: 2.6.0 reads
``transformers.file_utils.is_tf_available``, which transformers 5 removed (the image's own toolkit
build is newer than any release on the package index)."""
_SDK = re.compile(r"huggingface (?P<transformers>[\d.]+) \(pytorch(?P<torch>[\d.]+)\)")
_TAG = re.compile(
    r"^(?P<torch>[\d.]+)-transformers(?P<transformers>[\d.]+)-(?:cpu|gpu)-py(?P<py>\d)(?P<pyminor>\d+)"
)


@dataclass(frozen=True)
class ImageLibraries:
    """What the image ships, and what the local environment can really install of it."""

    image: str
    build: str
    transformers: str
    torch: str
    python: str
    toolkit: str = TOOLKIT
    source: str = ""

    def local_transformers(self) -> str:
        """The transformers the environment gets: the image's, below the toolkit's ceiling."""
        if int(self.transformers.split(".")[0]) >= 5:
            return TOOLKIT_TRANSFORMERS_CEILING
        return self.transformers

    def local_torch(self) -> str:
        """The torch the environment gets: this machine's CPU build (never another)."""
        try:
            return version("torch")
        except PackageNotFoundError:
            return ""

    def mismatches(self) -> list[str]:
        """What differs from the image, each with the reason (empty when everything matches)."""
        out = []
        if self.local_transformers() != self.transformers:
            out.append(
                f"transformers {self.local_transformers()} here, {self.transformers} in the image (the published "
                f"inference toolkit {self.toolkit} does not import under transformers 5)"
            )
        local = self.local_torch()
        if local.split("+")[0] != self.torch:
            out.append(
                f"torch {local} here, {self.torch} in the image (only this machine's CPU build can be installed)"
            )
        here = f"{sys.version_info[0]}.{sys.version_info[1]}"
        if here != self.python:
            out.append(
                f"Python {here} here, {self.python} in the image (the interpreter running deploybench)"
            )
        out.append(f"inference toolkit {self.toolkit}: {TOOLKIT_SOURCE}")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "mismatches": self.mismatches()}


def _from_build(name: str, build: dict[str, Any], image: str) -> ImageLibraries:
    sdk = _SDK.search(str(build.get("sdk", "")))
    tag = _TAG.match(str((build.get("cpu") or build.get("gpu") or {}).get("tag", "")))
    if sdk is None or tag is None:
        raise ValueError(f"images.yaml build {name} names no transformers and torch: {build.get('sdk')!r}")
    return ImageLibraries(
        image=image,
        build=name,
        transformers=sdk.group("transformers"),
        torch=sdk.group("torch"),
        python=f"{tag.group('py')}.{tag.group('pyminor')}",
        source=f"images.yaml ({image_table().get('source', '?')}) build {name}",
    )


def libraries_for_image(image: str | None) -> ImageLibraries:
    """The libraries of ``image`` (an HF inference URI), or of the table's default build.

    A URI whose tag is in the table gets that build's versions; an HF tag the table does not list
    gets the versions its tag names; any other image (no HF inference toolkit inside) gets the default
    build's, since the local stack only serves the HF contract.
    """
    entry = family_entry(HF_INFERENCE)
    builds: dict[str, Any] = entry["builds"]
    tag = (image or "").rsplit(":", 1)[-1] if image and ":" in image else ""
    for name, build in builds.items():
        tags = {(build.get(device) or {}).get("tag") for device in ("cpu", "gpu")}
        if tag and tag in tags:
            return _from_build(str(name), build, image or "")
    match = _TAG.match(tag)
    if match is not None and HF_INFERENCE in (image or ""):
        return ImageLibraries(
            image=image or "",
            build=match.group("transformers"),
            transformers=match.group("transformers"),
            torch=match.group("torch"),
            python=f"{match.group('py')}.{match.group('pyminor')}",
            source=f"the image tag {tag} (not in images.yaml)",
        )
    default = str(entry["default"])
    return _from_build(default, builds[default], image or "")
