"""What the preflight checks look at: the spec, and the artifact when there is one."""

from __future__ import annotations

import tarfile
from dataclasses import dataclass
from pathlib import Path

from workflows.contracts import ArtifactManifest
from workflows.conversion.manifest import MANIFEST_FILE, read_manifest
from workflows.errors import ArtifactIncomplete
from workflows.spec.pipeline import BUNDLED_MODEL, RunSpec

MB = 1024 * 1024


@dataclass(frozen=True)
class ArtifactView:
    """An artifact folder (the model.tar.gz contents) and its manifest.

    ``verified_by`` names the step that already verified every file (the pipeline's PackArtifact);
    None means the preflight verifies them itself.
    """

    root: Path
    manifest: ArtifactManifest
    verified_by: str | None = None

    def text(self, relative: str) -> str | None:
        path = self.root / relative
        return path.read_text(encoding="utf-8") if path.is_file() else None

    @property
    def code(self) -> str | None:
        return self.text("code/inference.py")

    @property
    def requirements(self) -> str | None:
        return self.text("code/requirements.txt")

    @property
    def tokenizer_dir(self) -> Path:
        return self.root / "tokenizer"

    def local_modules(self) -> frozenset[str]:
        """Python modules shipped next to inference.py (importable from code/)."""
        code = self.root / "code"
        if not code.is_dir():
            return frozenset()
        return frozenset(p.stem for p in code.glob("*.py")) | frozenset(
            p.name for p in code.iterdir() if p.is_dir()
        )

    @property
    def model_mb(self) -> float:
        entry = next((f for f in self.manifest.files if f.path == self.manifest.onnx_file), None)
        if entry is None:
            raise ArtifactIncomplete(
                f"the manifest does not list {self.manifest.onnx_file}.", fix="run the convert step again"
            )
        return entry.size_bytes / MB


@dataclass(frozen=True)
class PreflightContext:
    spec: RunSpec
    artifact: ArtifactView | None = None
    model_mb: float | None = None
    model_mb_from: str = ""
    region: str = "us-east-1"


def source_weights_mb(spec: RunSpec) -> float | None:
    """The model's weights in the source folder, an estimate of the fp32 ONNX size; None for S3."""
    from workflows.conversion.source import WEIGHT_FILES, bundled_model_path

    source = spec.model.source
    if source.startswith("s3://"):
        return None
    folder = bundled_model_path() if source == BUNDLED_MODEL else Path(source).expanduser()
    sizes = [(folder / name).stat().st_size for name in WEIGHT_FILES if (folder / name).is_file()]
    return max(sizes) / MB if sizes else None


def build_context(
    spec: RunSpec, artifact: ArtifactView | None = None, region: str = "us-east-1"
) -> PreflightContext:
    """The context for ``spec``: the model size from the artifact's ONNX file, else from the source."""
    if artifact is not None:
        return PreflightContext(
            spec, artifact, artifact.model_mb, f"{artifact.manifest.onnx_file} in the artifact", region
        )
    weights = source_weights_mb(spec)
    origin = "the source weights (estimate of the ONNX size)" if weights is not None else ""
    return PreflightContext(spec, None, weights, origin, region)


def open_artifact(path: Path, workdir: Path) -> ArtifactView:
    """An artifact folder, or a model.tar.gz / model.tar unpacked into ``workdir``.

    Raises:
        ArtifactIncomplete: the path is neither, or has no manifest.
    """
    if path.is_dir():
        return ArtifactView(path, read_manifest(path))
    if path.is_file() and tarfile.is_tarfile(path):
        target = workdir / "artifact"
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(path, "r:*") as archive:
            archive.extractall(target, filter="data")
        return ArtifactView(target, read_manifest(target))
    raise ArtifactIncomplete(
        f"{path} is neither an artifact folder nor a tar archive.",
        fix=f"pass the converted folder (with {MANIFEST_FILE}) or the packed model.tar.gz",
    )
