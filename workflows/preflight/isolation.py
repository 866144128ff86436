"""F37: a network-isolated container reaches no package index, so its artifact must carry its wheels.

With EnableNetworkIsolation the HF DLC's start-up ``pip install -r code/requirements.txt`` has no
network: it succeeds only when the file installs offline (``--no-index`` and ``--find-links wheels``,
which pip resolves next to the file) from a wheel in ``code/wheels/`` for every requirement. Pack
writes both when ``hosting.network_isolation`` is set (``workflows.artifact.vendoring``).
"""

from __future__ import annotations

import re
from pathlib import Path

from workflows.artifact.requirements import requirement_names
from workflows.contracts import Finding
from workflows.preflight.context import PreflightContext
from workflows.preflight.registry import Check

WHEELS_DIR = "wheels"
"""Folder of the vendored wheels, under the artifact's code/."""
_OPTION = re.compile(r"^\s*(--no-index|--find-links|-f)\b")


def wheel_distributions(names: list[str]) -> set[str]:
    """Normalised distribution names of wheel files (``onnxruntime-1.22.0-cp312-...whl`` -> onnxruntime)."""
    return {n.split("-", 1)[0].lower().replace("_", "-") for n in names if n.endswith(".whl")}


def installs_offline(requirements: str) -> bool:
    """Whether the requirements file itself sends pip to no index and to the vendored wheels."""
    options = {m.group(1) for line in requirements.splitlines() if (m := _OPTION.match(line))}
    return "--no-index" in options and bool(options & {"--find-links", "-f"})


def check_isolation(*, isolated: bool, requirements: str | None, wheels: list[str]) -> list[Finding]:
    """F37: an isolated spec's requirements install offline from vendored wheels, or it is refused.

    Args:
        isolated: ``hosting.network_isolation``.
        requirements: code/requirements.txt, or None.
        wheels: file names under code/wheels/.
    """
    needed = requirement_names(requirements or "")
    if not isolated or not needed:
        return []
    missing = sorted(needed - wheel_distributions(wheels))
    offline = installs_offline(requirements or "")
    if offline and not missing:
        return []
    problems = []
    if missing:
        problems.append(f"code/{WHEELS_DIR}/ has no wheel for {missing}")
    if not offline:
        problems.append("code/requirements.txt does not say --no-index and --find-links wheels")
    return [
        Finding(
            id="F37",
            severity="blocking",
            message="hosting.network_isolation is set, so the container reaches no package index, but the "
            f"artifact would need one: {'; '.join(problems)}. Its pip install at start would fail and the "
            "endpoint would never pass its health check (F01 in another form).",
            fix="pack again with hosting.network_isolation: true (pack vendors the wheels for the container's "
            "Python and platform), or set hosting.network_isolation: false",
            evidence=f"requirements: {sorted(needed)}; wheels: {sorted(wheels) or 'none'}",
        )
    ]


def vendored_wheels(root: Path) -> list[str]:
    folder = root / "code" / WHEELS_DIR
    return sorted(p.name for p in folder.glob("*.whl")) if folder.is_dir() else []


def isolation(context: PreflightContext, hosting: object) -> list[Finding]:
    artifact = context.artifact
    assert artifact is not None
    return check_isolation(
        # Every mode declares this check; serverless has no network_isolation (the spec refuses it).
        isolated=bool(getattr(hosting, "network_isolation", False)),
        requirements=artifact.requirements,
        wheels=vendored_wheels(artifact.root),
    )


ISOLATION: Check[object] = Check("isolated artifact installs offline", ("F37",), isolation, ("artifact",))
"""Declared by every hosting mode: any container whose network is isolated must install offline."""
