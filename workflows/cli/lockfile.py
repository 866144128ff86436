"""The project's lock read back: the exact versions ``make setup`` installs, and where this one differs.

``requirements.lock`` is written by ``make lock`` (pip-compile with hashes, from ``pyproject.toml``) and
sits at the repository root; ``make setup`` installs exactly it. A package installed at another version
than the lock's is drift: what runs is not what CI tested. ``deploybench doctor`` names it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.utils import canonicalize_name

PROJECT_LOCK = Path(__file__).resolve().parents[2] / "requirements.lock"
# The versions a user reads first when something behaves differently from CI: the AWS SDK (request
# shapes, enums, endpoints), the serving stack, the conversion stack, and the local engine.
KEY_PACKAGES = (
    "boto3",
    "botocore",
    "onnxruntime",
    "onnx",
    "torch",
    "transformers",
    "tokenizers",
    "moto",
    "pydantic",
    "aws-lambda-powertools",
)
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)")


@dataclass(frozen=True)
class PackageState:
    """One package: the lock's version (None when the lock has none), and the installed one (None if absent)."""

    name: str
    locked: str | None
    installed: str | None

    @property
    def drifted(self) -> bool:
        """Installed at another version than the lock's, or locked and missing."""
        return self.locked is not None and self.installed != self.locked


def read_pins(text: str) -> dict[str, str]:
    """``{canonical name: version}`` of every ``name==version`` line of a lock (hash lines, comments skipped)."""
    pins: dict[str, str] = {}
    for line in text.splitlines():
        found = _PIN.match(line.strip())
        if found:
            pins[canonicalize_name(found.group(1))] = found.group(2)
    return pins


def installed_version(name: str) -> str | None:
    """The installed distribution's version, or None."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def package_states(lock: Path = PROJECT_LOCK, names: tuple[str, ...] | None = None) -> list[PackageState]:
    """The lock's and the installed versions of ``names`` (every locked package when None).

    Raises:
        FileNotFoundError: there is no lock at ``lock`` (an install from a wheel, not a checkout).
    """
    pins = read_pins(lock.read_text(encoding="utf-8"))
    wanted = names if names is not None else tuple(sorted(pins))
    return [PackageState(name, pins.get(canonicalize_name(name)), installed_version(name)) for name in wanted]
