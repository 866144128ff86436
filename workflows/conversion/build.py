"""Build an artifact: Hugging Face folder -> verified ONNX artifact folder (export, optimise, verify,
quantize), and the model folder to build it from."""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np

from workflows.artifact.manifest import HubRecord, ServingPlan
from workflows.benchmark.texts import natural_texts
from workflows.contracts import ArtifactManifest, QuantizationReport, StepRequest
from workflows.conversion import parity
from workflows.conversion.export import ExportedModel, export_onnx
from workflows.conversion.families import family_of
from workflows.conversion.hub import fetch as hub_fetch
from workflows.conversion.int8 import build_int8
from workflows.conversion.manifest import file_entries, write_manifest
from workflows.conversion.optimize import choose_fp32, start_fusion
from workflows.conversion.output import staged_folder
from workflows.conversion.pooling import choose_pooling
from workflows.conversion.portable_tokenizer import verify_portable
from workflows.conversion.source import ModelFolder, inspect_folder, resolve_source
from workflows.errors import ModelSourceInvalid, ParityCheckFailed
from workflows.gpu.fp16 import build_fp16
from workflows.gpu.plan import serving_plan
from workflows.spec.model import ModelSpec, hub_source

SERVING_CODE = Path(str(files("artifacts") / "code"))
# inference.py loads the task handling from the file beside it.
SERVING_FILES = ("inference.py", "deploybench_tasks.py", "deploybench_openvino.py")
# Named by precision so that a log line or a listing shows which graph is served (F30).
ONNX_FILES = {"fp32": "model.onnx", "int8": "model.int8.onnx", "fp16": "model.fp16.onnx"}
# Dynamic INT8's MatMulInteger and DynamicQuantizeLinear have no CUDA kernels in onnxruntime's CUDA
# provider: onnxruntime places them on the CPU provider, the session's first provider stays CUDA.
INT8_ON_GPU = (
    "INT8 on a GPU: onnxruntime's CUDA provider has no kernels for dynamic INT8 (MatMulInteger, "
    "DynamicQuantizeLinear), so those nodes run on the CPU provider; prefer fp16 on GPUs"
)


def write_serving_code(root: Path, plan: ServingPlan) -> None:
    """code/inference.py and a requirements.txt that pins the onnxruntime parity was measured on (F01):
    its GPU build (onnxruntime-gpu) when the plan's device is a GPU (F36).

    Never optimum: it pins transformers<4.58 and clashes with the container (F28).
    """
    code = root / "code"
    code.mkdir(parents=True, exist_ok=True)
    for name in SERVING_FILES:
        shutil.copy2(SERVING_CODE / name, code / name)
    lines = [plan.requirement, *([plan.runtime_requirement] if plan.runtime_requirement else [])]
    (code / "requirements.txt").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def load_tokenizer(folder: ModelFolder) -> Any:
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(folder.path))
    except Exception as error:  # tokenizer loading raises many types for a broken folder
        raise ModelSourceInvalid(
            f"the tokenizer in {folder.path} does not load: {error}",
            fix="save the model's tokenizer into the folder with tokenizer.save_pretrained(folder)",
        ) from error


def timing_shapes(tokenizer: Any, max_length: int) -> dict[str, dict[str, np.ndarray]]:
    """Batches for the build-host A/B: one natural text, and 8 texts padded to 64 tokens."""
    length = min(64, max_length)
    single = tokenizer(natural_texts(1, seed=5), return_tensors="np")
    padded = tokenizer(
        natural_texts(8, seed=6, median_words=80),
        padding="max_length",
        truncation=True,
        max_length=length,
        return_tensors="np",
    )
    return {
        "b1": {k: v.astype(np.int64) for k, v in single.items()},
        f"b8x{length}": {k: v.astype(np.int64) for k, v in padded.items()},
    }


@dataclass(frozen=True)
class SharedExport:
    """An export and its PyTorch reference, made once for all the devices' artifacts of a run."""

    exported: ExportedModel
    checked: parity.ParityCheck


def build_artifact(
    request: StepRequest,
    *,
    source: Path,
    out: Path,
    scratch: Path,
    hub: HubRecord | None = None,
    shared: dict[str, SharedExport] | None = None,
) -> ArtifactManifest:
    """Export, optimise, verify (and quantize) into ``out``; returns the manifest written there.

    ``out`` appears complete or not at all: everything is built in a staging folder next to it.

    Args:
        shared: exports already made in this step, by their settings (one run's devices share
            one export and one PyTorch reference); an export made here is added.
    """
    import onnxruntime

    spec = request.spec
    convert, max_length = spec.convert, spec.model.max_sequence_length
    # A cross-encoder is a sequence classifier: it exports, checks and quantizes as one.
    task = "embedding" if spec.model.task == "embedding" else "classification"
    folder = inspect_folder(source)
    family = family_of(folder)
    pooling = (
        choose_pooling(folder.path, pooling=spec.model.pooling, normalize=spec.model.normalize)
        if task == "embedding"
        else None
    )
    tokenizer = load_tokenizer(folder)
    # Every device's artifact of a run starts from the same export and the same PyTorch reference.
    key = f"{convert.opset}/{task}/{pooling}/{max_length}/{convert.parity_tolerance}"
    reused = shared.get(key) if shared is not None else None
    with staged_folder(out) as staging:
        scratch.mkdir(parents=True, exist_ok=True)
        if reused is None:
            exported, graph = export_onnx(
                folder, task, tokenizer, scratch / "export.onnx", opset=convert.opset, pooling=pooling
            )
        else:
            exported, graph = reused.exported, None
        # onnxruntime's fused graph holds its own contrib operators (Attention, SkipLayerNormalization),
        # which OpenVINO does not read: OpenVINO gets the plain export and fuses it itself.
        mode = convert.optimize if convert.precision == "fp32" and convert.engine != "openvino" else "none"
        with contextlib.ExitStack() as passes:
            fusion = start_fusion(
                mode,
                family,
                folder.config,
                exported.onnx_path,
                scratch / "fused.onnx",
                timeout_s=convert.optimizer_timeout_s,
                memory_gib=convert.optimizer_memory_gib,
            )
            if fusion is not None:
                passes.enter_context(fusion)  # killed if anything below fails first
            if reused is None:
                batches = parity.check_batches(
                    tokenizer, parity.validation_items(task), max_length=max_length
                )
                checked = parity.ParityCheck(
                    batches, parity.run_torch(graph, batches), convert.parity_tolerance
                )
                del graph  # the quantization pass gets the memory back
                gc.collect()
                if shared is not None:
                    shared[key] = SharedExport(exported, checked)
            else:
                checked = reused.checked
            report, fp32_outputs = checked.parity(exported.onnx_path)
            if not report.passed:
                raise ParityCheckFailed(
                    f"ONNX output differs from PyTorch by {report.max_abs_diff:.2e} (tolerance {report.tolerance:.0e}) "
                    f"on {report.texts} validation texts; min cosine {report.min_cosine:.6f}.",
                    fix="raise convert.parity_tolerance only if the difference is acceptable, or report the architecture",
                )
            quantization: QuantizationReport | None = None
            warnings: list[str] = []
            if convert.precision == "int8":
                # The quantizer sees every MatMul of the plain export (a fused graph hides the QKV
                # weights inside Attention), and INT8 of the plain graph measured as fast.
                served, quantization = build_int8(
                    exported.onnx_path,
                    fp32_outputs,
                    checked,
                    tokenizer=tokenizer,
                    task=task,
                    labels=exported.labels,
                    convert=convert,
                    max_length=max_length,
                    scratch=scratch,
                    static=convert.engine == "openvino",
                )
                optimization = (
                    f"INT8 of the plain export, {quantization.outlier_channels} outlier channels kept in fp32; "
                    + (
                        "OpenVINO fuses at compile"
                        if convert.engine == "openvino"
                        else "onnxruntime fuses at session load"
                    )
                )
            elif convert.precision == "fp16":
                served, quantization = build_fp16(
                    exported.onnx_path,
                    fp32_outputs,
                    checked,
                    family=family.name,
                    task=task,
                    labels=exported.labels,
                    convert=convert,
                    scratch=scratch,
                )
                optimization = (
                    f"fp16 of the plain export, {quantization.fp32_nodes} nodes kept in fp32; "
                    "onnxruntime fuses at session load"
                )
            else:
                choice = choose_fp32(
                    mode=mode,
                    family=family,
                    plain=exported.onnx_path,
                    fusion=fusion,
                    parity_ok=checked.gate,
                    timing_shapes=timing_shapes(tokenizer, max_length),
                )
                served, optimization, warnings = choice.path, choice.summary, choice.warnings
                if convert.engine == "openvino":
                    optimization = "none (convert.engine is 'openvino'); OpenVINO fuses at compile"
                report, _ = checked.parity(served)
        onnx_file = ONNX_FILES[convert.precision]
        shutil.copy2(served, staging / onnx_file)
        tokenizer.save_pretrained(str(staging / "tokenizer"))
        tokenizer_files = verify_portable(staging / "tokenizer", tokenizer, max_length=max_length)
        plan = serving_plan(spec, onnxruntime.__version__)
        write_serving_code(staging, plan)
        if plan.device == "gpu" and convert.precision == "int8":
            warnings.append(INT8_ON_GPU)
        manifest = ArtifactManifest(
            task=spec.model.task,
            architecture=folder.architecture,
            onnx_file=onnx_file,
            inputs=exported.inputs,
            outputs=exported.outputs,
            opset=convert.opset,
            precision=convert.precision,
            max_sequence_length=max_length,
            labels=exported.labels,
            pooling=exported.pooling,
            normalize=exported.normalize,
            pooling_basis=pooling.basis if pooling else "",
            hub=hub,
            onnxruntime_version=onnxruntime.__version__,
            optimization=optimization,
            parity=report,
            quantization=quantization,
            warnings=warnings,
            serving=plan,
            tokenizer=tokenizer_files,
            files=file_entries(staging),
        )
        write_manifest(staging, manifest)
    return manifest


def fetch_source(
    model: ModelSpec,
    *,
    s3: Any,
    workdir: Path,
    secretsmanager: Any | None = None,
    environ: Mapping[str, str] = os.environ,
) -> tuple[Path, HubRecord | None]:
    """The model folder to convert, and for an ``hf://`` source what was downloaded (repo, revision, commit)."""
    if not hub_source(model.source):
        return resolve_source(model.source, s3=s3, workdir=workdir), None
    folder, snapshot = hub_fetch(model, secretsmanager=secretsmanager, workdir=workdir, environ=environ)
    return folder, HubRecord(
        repo=snapshot.source.repo, revision=snapshot.source.revision, commit=snapshot.commit
    )
