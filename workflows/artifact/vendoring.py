"""Pack's part in network isolation (F37): the wheels the serving code needs travel in the artifact.

An isolated container reaches no package index, so the DLC's start-up ``pip install -r
code/requirements.txt`` must find everything in the artifact. Pack downloads the wheels of every
requirement, and their dependencies, for the container's Python and platform (``pip download
--only-binary=:all: --platform ... --python-version ...``) into ``code/wheels/``, and rewrites the
requirements to install from there offline: ``--no-index`` and ``--find-links wheels``, which pip
resolves next to the requirements file. Where the wheels come from is pip's own configuration (the
index, ``PIP_FIND_LINKS``, its cache), or ``find_links`` when given.

The rewritten file is a lock: every vendored wheel, dependencies included, pinned to its version with
its sha256, so the container's pip runs in hash-checking mode and installs exactly the files pack
vendored (a changed or substituted wheel stops the install). The lines as written stay as comments.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import Any

from packaging.utils import parse_wheel_filename

from workflows.conversion.manifest import read_manifest
from workflows.errors import ArtifactIncomplete
from workflows.hosting.image_choice import image_for
from workflows.hosting.specs import TritonHosting
from workflows.hosting.triton_repository import TOKENIZER_WHEEL, TRITON_PYTHON
from workflows.images.table import HF_INFERENCE
from workflows.preflight.artifact import requirement_names
from workflows.preflight.isolation import WHEELS_DIR
from workflows.settings import Settings

# The HF inference DLCs are Ubuntu 22.04 (glibc 2.35) on x86_64: manylinux wheels up to 2.35 run there.
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_28_x86_64", "manylinux_2_34_x86_64")
DEFAULT_PYTHON = "3.12"
_PYTHON_TAG = re.compile(r"-py(\d)(\d+)\b")
OFFLINE_HEADER = f"--no-index\n--find-links {WHEELS_DIR}\n"
PIP_TIMEOUT_S = 900


def container_python(image: str) -> str:
    """The container's Python from its image tag (``...-cpu-py312-ubuntu22.04`` -> ``3.12``)."""
    found = _PYTHON_TAG.search(image)
    return f"{found.group(1)}.{found.group(2)}" if found else DEFAULT_PYTHON


def _download_command(
    dest: Path, python_version: str, platforms: tuple[str, ...], find_links: tuple[Path, ...]
) -> list[str]:
    """``pip download`` of binary wheels for the container's Python and platforms into ``dest``."""
    command = [sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--implementation", "cp"]
    command += ["--python-version", python_version, "--dest", str(dest), "--disable-pip-version-check"]
    for platform in platforms:
        command += ["--platform", platform]
    if find_links:
        command.append("--no-index")
    for folder in find_links:
        command += ["--find-links", str(folder)]
    return command


def vendor_wheels(
    root: Path,
    *,
    python_version: str,
    platforms: tuple[str, ...] = PLATFORMS,
    find_links: tuple[Path, ...] = (),
) -> list[str]:
    """Download the wheels of code/requirements.txt into code/wheels/ and make the file install offline.

    Args:
        root: the artifact folder.
        python_version: the container's Python, e.g. ``3.12``.
        find_links: folders of wheels to take them from instead of an index.

    Returns:
        The vendored wheel file names (none when there is nothing to install).

    Raises:
        ArtifactIncomplete: a requirement has no wheel for the container's Python and platform.
    """
    requirements = root / "code" / "requirements.txt"
    text = requirements.read_text(encoding="utf-8") if requirements.is_file() else ""
    if not requirement_names(text):
        return []
    wheels = root / "code" / WHEELS_DIR
    # A repack vendors afresh: the lock lists exactly the wheels of this download.
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir(parents=True)
    command = _download_command(wheels, python_version, platforms, find_links)
    # Requirement lines without their per-line options: a repack reads back its own lock, whose --hash
    # options would put pip download in hash-checking mode for the lines a remediation added.
    kept = [
        line.split(" --", 1)[0].strip()
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith(("-", "#"))
    ]
    listed = root / "code" / "requirements.vendored.txt"
    listed.write_text("\n".join(kept) + "\n", encoding="utf-8")
    try:
        done = subprocess.run(
            [*command, "-r", str(listed)], capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False
        )
    finally:
        listed.unlink(missing_ok=True)
    if done.returncode != 0:
        shutil.rmtree(wheels, ignore_errors=True)
        raise ArtifactIncomplete(
            f"the isolated container's wheels could not be vendored for Python {python_version} on "
            f"{platforms[0]}: {done.stderr.strip()[-600:]}",
            fix="make the wheels reachable to pack (a package index, PIP_FIND_LINKS), pin versions that publish "
            "wheels for that Python and platform, or set hosting.network_isolation: false",
        )
    vendored = sorted(wheels.glob("*.whl"))
    requirements.write_text(OFFLINE_HEADER + locked_requirements(kept, vendored), encoding="utf-8")
    return [p.name for p in vendored]


def locked_requirements(asked: list[str], wheels: list[Path]) -> str:
    """The requirement lines of a vendored artifact: each wheel pinned with its sha256, the asked lines as comments."""
    lines = [
        "# Locked by pack: every vendored wheel with its sha256 (pip installs in hash-checking mode).",
        "# Asked:",
    ]
    lines += [f"#   {line.strip()}" for line in asked]
    for wheel in wheels:
        name, version, _, _ = parse_wheel_filename(wheel.name)
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        lines.append(f"{name}=={version} --hash=sha256:{digest}")
    return "\n".join(lines) + "\n"


def vendor_for_spec(root: Path, spec: Any, settings: Settings) -> list[str]:
    """Vendor the wheels when ``hosting.network_isolation`` is set (nothing otherwise).

    The container's Python is its image's; a local SageMaker (``settings.sagemaker_endpoint_url``) runs
    the serving stack on this machine's Python, so the wheels are for that one.
    """
    hosting = spec.hosting
    if not getattr(hosting, "network_isolation", False):
        return []
    if settings.sagemaker_endpoint_url:
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
    else:
        types = getattr(hosting, "instance_type_fallbacks", None) or []
        version = container_python(
            image_for(HF_INFERENCE, hosting, types[0] if types else None, settings.region)
        )
    return vendor_wheels(root, python_version=version)


def tokenizers_version(root: Path) -> str:
    """The tokenizers release that wrote the artifact's tokenizer.json (it reads it back), else this one's."""
    manifest = read_manifest(root)
    saved = manifest.tokenizer.saved_by.get("tokenizers") if manifest.tokenizer else None
    return saved or version("tokenizers")


def vendor_triton_tokenizer(root: Path, spec: Any, *, find_links: tuple[Path, ...] = ()) -> str | None:
    """Stage the tokenizers wheel for a Triton tokenizer ensemble at ``TOKENIZER_WHEEL`` (None otherwise).

    The python backend runs the Triton image's Python, which has no tokenizers package, and Triton
    installs nothing at start-up: the wheel travels with the model repository and the model unpacks it.

    Raises:
        ArtifactIncomplete: no wheel of that release for the image's Python and platform.
    """
    hosting = spec.hosting
    if not isinstance(hosting, TritonHosting) or not hosting.tokenizer_ensemble:
        return None
    wanted = f"tokenizers=={tokenizers_version(root)}"
    with tempfile.TemporaryDirectory(prefix="tokenizers-wheel-") as scratch:
        command = _download_command(Path(scratch), TRITON_PYTHON, PLATFORMS, find_links)
        done = subprocess.run(
            [*command, "--no-deps", wanted],
            capture_output=True,
            text=True,
            timeout=PIP_TIMEOUT_S,
            check=False,
        )
        found = sorted(Path(scratch).glob("tokenizers-*.whl"))
        if done.returncode != 0 or not found:
            raise ArtifactIncomplete(
                f"the Triton tokenizer's {wanted} wheel could not be fetched for Python {TRITON_PYTHON} on "
                f"{PLATFORMS[0]}: {done.stderr.strip()[-600:]}",
                fix="make the wheel reachable to pack (a package index, PIP_FIND_LINKS), or set "
                "hosting.tokenizer_ensemble: false to serve token ids",
            )
        target = root / TOKENIZER_WHEEL
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(found[0], target)
    return found[0].name
