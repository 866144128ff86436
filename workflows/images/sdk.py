"""Writes ``workflows/data/images.yaml`` from the SageMaker Python SDK's own image table.

The SDK (``sagemaker-core``) ships ``sagemaker/core/image_uri_config/<framework>.json``: per
framework and version the repository, the tag's parts and the registry account of every region.
That table is the source of truth for every image deploybench picks. The package itself is not a
dependency: it pins ``rich<15`` and pulls pandas, scipy, paramiko..., so it is installed with
``--no-deps`` for development (``make setup``) and only its JSON files are read, found through
``importlib.util.find_spec`` without importing it. Lambdas never see it: they read the extract.

    python -m workflows.images.sdk            # rewrite workflows/data/images.yaml
    python -m workflows.images.sdk --check    # exit 1 when the committed file differs

What the SDK's table does not hold is kept here, next to the selection, with its source: which
builds deploybench offers (and which is the default), Docker labels (F05) and Triton's CUDA.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from workflows.errors import SpecInvalid
from workflows.images.table import DJL_INFERENCE, HF_INFERENCE, TRITON, VLLM

DISTRIBUTION = "sagemaker-core"
TARGET = Path(__file__).parents[1] / "data" / "images.yaml"
_CUDA_TAG = re.compile(r"cu(\d{2})(\d)\b")
# Field notes, label table (read from each image manifest's config with aws ecr batch-get-image).
_LABELS_BOTH = {"accept-bind-to-port": True, "multi-models": True}
_LABELS_NONE = {"accept-bind-to-port": False, "multi-models": False}


@dataclass(frozen=True)
class Selection:
    """The builds of one family deploybench offers, and the facts the SDK's table lacks."""

    config: str
    """The SDK's JSON file (without ``.json``)."""
    versions: tuple[str, ...]
    """Offered versions; the first is the default."""
    devices: tuple[str, ...]
    base: str | None = None
    """The base framework key inside a version (Hugging Face: ``pytorch2.6.0``)."""
    labels: dict[str, bool] = field(default_factory=dict)
    cuda: dict[str, str] = field(default_factory=dict)
    """CUDA per version where the tag does not say it."""
    note: str = ""


SELECTIONS: dict[str, Selection] = {
    # The field ran the transformers 5.5.3 build (PyTorch 2.6.0); older builds stay selectable.
    HF_INFERENCE: Selection(
        config="huggingface",
        versions=("5.5.3", "4.51.3", "4.49.0"),
        devices=("cpu", "gpu"),
        base="pytorch2.6.0",
        labels=_LABELS_BOTH,
        note="code/inference.py on Multi Model Server; labels: field notes",
    ),
    # The SDK lists only the LMI (GPU) builds: the Java-first *-cpu-full image is not in its table,
    # so LMI on a CPU instance needs hosting.image.
    DJL_INFERENCE: Selection(
        config="djl-lmi",
        versions=("0.35.0",),
        devices=("gpu",),
        labels=_LABELS_BOTH,
        note="LMI 17.0.0 (vLLM 0.11.1); labels: field notes (djl-inference row)",
    ),
    TRITON: Selection(
        config="sagemaker-tritonserver",
        versions=("26.05",),
        devices=("cpu", "gpu"),
        cuda={"26.05": "13.2"},
        note="Triton 26.05, CUDA 13.2.1 (field notes: error 803 on the default AMI, F20)",
    ),
    VLLM: Selection(
        config="vllm",
        versions=("0.26.0",),
        devices=("gpu",),
        labels=_LABELS_NONE,
        note="standalone endpoints only: neither label (field notes, F05)",
    ),
}

HEADER = """\
# Container images deploybench deploys, by family, build and device. GENERATED from the SageMaker
# Python SDK's image table (sagemaker-core's sagemaker/core/image_uri_config/*.json) by
# `python -m workflows.images.sdk`; do not edit: change the selection in workflows/images/sdk.py.
# tests/stack/test_images.py fails when this file and the installed SDK table disagree, and when a mode
# deploys an image that is not listed here.
#
# URI: <accounts[region]>.dkr.ecr.<region>.<partition DNS suffix>/<repository>:<tag>, for a region
# in the build's `regions`. `default` is the build a spec gets unless hosting.image_version names
# another; hosting.image overrides both. Labels (F05) and Triton's CUDA are not in the SDK's table:
# they come from the selection's sources (`note`).
"""


def config_dir() -> Path | None:
    """The SDK's ``image_uri_config`` folder, found without importing the package (None if absent)."""
    spec = importlib.util.find_spec("sagemaker")
    for location in (spec.submodule_search_locations or []) if spec else []:
        for candidate in (Path(location) / "core" / "image_uri_config", Path(location) / "image_uri_config"):
            if candidate.is_dir():
                return candidate
    return None


def sdk_version() -> str:
    return importlib.metadata.version(DISTRIBUTION)


def _version_config(folder: Path, selection: Selection, version: str) -> tuple[dict[str, Any], Any]:
    config = json.loads((folder / f"{selection.config}.json").read_text(encoding="utf-8"))
    scoped = config if "scope" in config else config["inference"]
    found = scoped["versions"][version]
    if selection.base:
        found = found[selection.base]
    return found, scoped.get("processors") or found.get("processors")


def _tag(selection: Selection, version: str, found: dict[str, Any], processor: str | None) -> str:
    """The tag as the SDK's ``image_uris.retrieve`` builds it for these frameworks."""
    if selection.base:
        prefix = f"{selection.base.removeprefix('pytorch')}-transformers{version}"
    else:
        prefix = str(found.get("tag_prefix", version))
    in_tag = processor if found.get("processor_in_tag", True) else None
    python = (found.get("py_versions") or [None])[0]
    container = (found.get("container_version") or {}).get(processor or "")
    tag = "-".join(str(part) for part in (prefix, in_tag, python, container) if part)
    # The SDK strips Triton's -gpu: only its CPU images carry a processor suffix.
    return tag.removesuffix("-gpu") if selection.config == "sagemaker-tritonserver" else tag


def _device_entry(
    selection: Selection, version: str, found: dict[str, Any], device: str, processors: Any
) -> dict[str, Any]:
    if processors and device not in processors:
        raise SpecInvalid(
            f"the SDK's {selection.config}.json {version} has no {device} image (processors {processors}).",
            fix=f"drop {device} from the selection in workflows/images/sdk.py",
        )
    tag = _tag(selection, version, found, device if processors else None)
    entry: dict[str, Any] = {"repository": found["repository"], "tag": tag}
    cuda = _CUDA_TAG.search(tag)
    if device == "gpu" and (cuda or selection.cuda.get(version)):
        entry["cuda"] = f"{cuda.group(1)}.{cuda.group(2)}" if cuda else selection.cuda[version]
    if selection.labels:
        entry["labels"] = dict(selection.labels)
    return entry


def extract(folder: Path) -> dict[str, Any]:
    """The table ``images.yaml`` holds, built from the SDK's JSON files in ``folder``.

    Raises:
        SpecInvalid: a selected build or device is not in the SDK's table, or a region's registry
            account differs between builds (the one ``accounts`` map would then be wrong).
    """
    accounts: dict[str, str] = {}
    families: dict[str, Any] = {}
    for family, selection in SELECTIONS.items():
        builds: dict[str, Any] = {}
        for version in selection.versions:
            found, processors = _version_config(folder, selection, version)
            for region, account in found["registries"].items():
                if accounts.setdefault(region, account) != account:
                    raise SpecInvalid(
                        f"{region} has registry account {accounts[region]} and {account} ({family} {version}).",
                        fix="give images.yaml per-build registries",
                    )
            builds[version] = {
                "sdk": f"{selection.config} {version}" + (f" ({selection.base})" if selection.base else ""),
                "regions": sorted(found["registries"]),
                **{d: _device_entry(selection, version, found, d, processors) for d in selection.devices},
            }
        families[family] = {"default": selection.versions[0], "note": selection.note, "builds": builds}
    return {
        "source": f"{DISTRIBUTION} {sdk_version()}",
        "accounts": dict(sorted(accounts.items())),
        "families": families,
    }


class _Dumper(yaml.SafeDumper):
    """Region lists on one line; account IDs quoted (``094389454867`` must stay a string everywhere)."""


_Dumper.add_representer(
    list, lambda dumper, value: dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True)
)
_Dumper.add_representer(
    str,
    lambda dumper, value: dumper.represent_scalar(
        "tag:yaml.org,2002:str", value, style="'" if value.isdigit() else None
    ),
)


def render(folder: Path) -> str:
    return HEADER + yaml.dump(extract(folder), Dumper=_Dumper, sort_keys=False, width=100)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when images.yaml differs")
    args = parser.parse_args(argv)
    folder = config_dir()
    if folder is None:
        print(
            f"{DISTRIBUTION} is not installed: pip install --no-deps {DISTRIBUTION} (make setup does)",
            file=sys.stderr,
        )
        return 2
    text = render(folder)
    if args.check:
        same = TARGET.read_text(encoding="utf-8") == text
        print(f"{TARGET} {'matches' if same else 'differs from'} {DISTRIBUTION} {sdk_version()}")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET} from {DISTRIBUTION} {sdk_version()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
