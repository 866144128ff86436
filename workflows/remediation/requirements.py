"""F01/F17: the requirement lines a repack adds to ``code/requirements.txt``.

The serving container installs ``code/requirements.txt`` at start (the HF DLC runs pip on it), so
a missing module is fixed by adding its distribution there and repacking; the artifact's
manifest is updated with the new file's size and sha256, so it stays verifiable (F22).
"""

from __future__ import annotations

from pathlib import Path

from workflows.artifact.requirements import REQUIREMENTS_FILE, requirement_names
from workflows.contracts import FileEntry
from workflows.conversion.manifest import read_manifest, sha256_of, write_manifest
from workflows.preflight.artifact import LMI_CPU_REQUIREMENTS, distribution_of


def requirements_for(module: str, *, diagnosis_id: str, onnxruntime_version: str | None) -> list[str]:
    """What to add for a missing ``module``.

    onnxruntime is pinned to the version the conversion measured parity on (docs/failures.md F01: an
    unpinned one may not load the graph the same way); the LMI CPU image lacks the whole set its
    models need (F17); any other module gets its distribution, unpinned. Never optimum (F28).
    """
    top = module.split(".")[0]
    if diagnosis_id == "F17":
        return list(LMI_CPU_REQUIREMENTS)
    if top == "onnxruntime" and onnxruntime_version:
        return [f"onnxruntime=={onnxruntime_version}"]
    return [distribution_of(top)]


def apply_requirements(root: Path, lines: list[str]) -> list[str]:
    """Add ``lines`` to ``root/code/requirements.txt`` (those it does not name yet) and update the
    manifest's entry for it; returns the lines added. Call it on a verified artifact folder.
    """
    if not lines:
        return []
    path = root / REQUIREMENTS_FILE
    current = path.read_text(encoding="utf-8") if path.is_file() else ""
    named = requirement_names(current)
    added = [line for line in lines if not requirement_names(line) <= named]
    if not added:
        return []
    text = current if not current or current.endswith("\n") else current + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "".join(f"{line}\n" for line in added), encoding="utf-8")
    manifest = read_manifest(root)
    entry = FileEntry(path=REQUIREMENTS_FILE, size_bytes=path.stat().st_size, sha256=sha256_of(path))
    files = [f for f in manifest.files if f.path != REQUIREMENTS_FILE] + [entry]
    write_manifest(root, manifest.model_copy(update={"files": sorted(files, key=lambda f: f.path)}))
    return added
