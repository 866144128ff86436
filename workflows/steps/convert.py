"""Convert step: Hugging Face folder -> verified ONNX artifact folder in S3 staging."""

from __future__ import annotations

import shutil
import time
from importlib.resources import files
from pathlib import Path
from typing import Any

from workflows.contracts import ArtifactManifest, ConvertResult, StepRequest
from workflows.conversion import export, parity
from workflows.conversion.manifest import file_entries, write_manifest
from workflows.conversion.source import inspect_folder, resolve_source
from workflows.errors import ConversionFailed, ParityCheckFailed
from workflows.naming import staging_prefix
from workflows.settings import Settings
from workflows.storage import upload_folder
from workflows.texts import validation_texts

SERVING_CODE = Path(str(files("artifacts") / "code"))


def write_serving_code(root: Path, onnxruntime_version: str) -> None:
    """code/inference.py and a requirements.txt that pins the onnxruntime parity was measured on (F01).

    Never optimum: it pins transformers<4.58 and clashes with the container (F28).
    """
    code = root / "code"
    code.mkdir(parents=True, exist_ok=True)
    shutil.copy2(SERVING_CODE / "inference.py", code / "inference.py")
    (code / "requirements.txt").write_text(f"onnxruntime=={onnxruntime_version}\n", encoding="utf-8")


def build_artifact(request: StepRequest, *, source: Path, out: Path, scratch: Path) -> ArtifactManifest:
    """Export, optimise and verify into ``out``; returns the manifest written there."""
    import onnxruntime
    from transformers import AutoTokenizer

    spec = request.spec
    folder = inspect_folder(source)
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(folder.path))
    except Exception as error:
        raise ConversionFailed(f"the tokenizer in {folder.path} does not load: {error}") from error
    tokenizer.save_pretrained(str(out / "tokenizer"))
    exported, graph = export.export_onnx(
        folder, spec.model.task, tokenizer, scratch / "export.onnx", opset=spec.convert.opset
    )
    onnx_file = "model.onnx"
    optimization = export.optimize(folder, exported.onnx_path, out / onnx_file)
    if not (out / onnx_file).exists():
        shutil.copy2(exported.onnx_path, out / onnx_file)

    texts = validation_texts()
    max_length = spec.model.max_sequence_length
    reference = parity.run_torch(graph, tokenizer, exported.inputs, texts, max_length=max_length)
    session = parity.ort_session(out / onnx_file)
    candidate = parity.run_onnx(session, tokenizer, texts, max_length=max_length)
    report = parity.compare(reference, candidate, tolerance=spec.convert.parity_tolerance)
    if not report.passed:
        raise ParityCheckFailed(
            f"ONNX output differs from PyTorch by {report.max_abs_diff:.2e} (tolerance {report.tolerance:.0e}) "
            f"on {report.texts} validation texts; min cosine {report.min_cosine:.6f}.",
            fix="raise convert.parity_tolerance only if the difference is acceptable, or report the architecture",
        )
    write_serving_code(out, onnxruntime.__version__)
    manifest = ArtifactManifest(
        task=spec.model.task,
        architecture=folder.architecture,
        onnx_file=onnx_file,
        inputs=exported.inputs,
        outputs=exported.outputs,
        opset=spec.convert.opset,
        precision=spec.convert.precision,
        max_sequence_length=max_length,
        labels=exported.labels,
        onnxruntime_version=onnxruntime.__version__,
        optimization=optimization,
        parity=report,
        files=file_entries(out),
    )
    write_manifest(out, manifest)
    return manifest


def convert(request: StepRequest, *, s3: Any, settings: Settings, workdir: Path) -> ConvertResult:
    """Build the artifact folder under ``workdir`` and upload it to the run's staging prefix."""
    started = time.perf_counter()
    source = resolve_source(request.spec.model.source, s3=s3, workdir=workdir)
    out = workdir / "artifact"
    scratch = workdir / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    manifest = build_artifact(request, source=source, out=out, scratch=scratch)
    staging_uri = f"s3://{settings.bucket}/{staging_prefix(request.run_id)}"
    upload_folder(s3, out, staging_uri)
    return ConvertResult(
        staging_uri=staging_uri, manifest=manifest, seconds=round(time.perf_counter() - started, 3)
    )
