"""The artifact manifest: every file with its size and sha256, and what the server must load."""

from __future__ import annotations

import hashlib
from pathlib import Path

from workflows.contracts import ArtifactManifest, FileEntry
from workflows.errors import ArtifactIncomplete

# Not "manifest.json": Multi Model Server 1.1.11 (the HF DLC's server) takes a model folder holding a
# file of that name (matched case-insensitively) for a legacy model archive, fails with a
# NullPointerException in LegacyManifest.migrate and stops, so the endpoint never passes its health check.
MANIFEST_FILE = "deploybench-manifest.json"


def sha256_of(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def file_entries(root: Path) -> list[FileEntry]:
    """Every file under ``root`` except the manifest itself, sorted by path."""
    entries = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        if relative == MANIFEST_FILE:
            continue
        entries.append(FileEntry(path=relative, size_bytes=path.stat().st_size, sha256=sha256_of(path)))
    return entries


def write_manifest(root: Path, manifest: ArtifactManifest) -> Path:
    target = root / MANIFEST_FILE
    target.write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    return target


def read_manifest(root: Path) -> ArtifactManifest:
    path = root / MANIFEST_FILE
    if not path.is_file():
        raise ArtifactIncomplete(f"{root} has no {MANIFEST_FILE}.", fix="run the convert step again")
    return ArtifactManifest.model_validate_json(path.read_text(encoding="utf-8"))


def verify_files(root: Path, manifest: ArtifactManifest) -> None:
    """Every file the manifest names exists with its recorded size and sha256 (F22).

    Raises:
        ArtifactIncomplete: naming the first bad file.
    """
    named = {entry.path for entry in manifest.files}
    for required in (manifest.onnx_file, "code/inference.py", "code/requirements.txt"):
        if required not in named:
            raise ArtifactIncomplete(
                f"the manifest does not list {required}.", fix="run the convert step again"
            )
    for entry in manifest.files:
        path = root / entry.path
        if not path.is_file():
            raise ArtifactIncomplete(
                f"{entry.path} is missing from {root}.", fix="run the convert step again"
            )
        size = path.stat().st_size
        if size != entry.size_bytes:
            raise ArtifactIncomplete(
                f"{entry.path} is {size} bytes, the manifest says {entry.size_bytes}: truncated or replaced (F22).",
                fix="run the convert step again",
            )
        if sha256_of(path) != entry.sha256:
            raise ArtifactIncomplete(
                f"{entry.path} does not match its sha256 (F22).", fix="run the convert step again"
            )


def verify_artifact(root: Path) -> None:
    """The manifest's files are complete (F22) and its ONNX file loads in onnxruntime."""
    # Here, not at the top: onnxruntime and numpy load only when an artifact is verified.
    from workflows.conversion.parity import ort_session

    manifest = read_manifest(root)
    verify_files(root, manifest)
    try:
        ort_session(root / manifest.onnx_file)
    except Exception as error:
        raise ArtifactIncomplete(
            f"{manifest.onnx_file} does not load in onnxruntime: {error}", fix="convert again"
        ) from error
