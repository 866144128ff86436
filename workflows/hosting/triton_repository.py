"""A Triton model repository planned from the ONNX artifact, checked before anything is uploaded.

The plan is a list of files: generated ``config.pbtxt`` texts (from ``artifacts/triton/*.pbtxt``)
and files copied from the run's staging folder (``model.onnx``, the tokenizer and, for the python
backend, the ``tokenizers`` wheel that the Triton image lacks). Every config is
parsed with the real ``inference.ModelConfig`` protobuf (F19); each version folder must hold the
file its backend loads (onnxruntime -> model.onnx, python -> model.py: F23), and weights must be
complete (F22). The repository then goes to S3 as an uncompressed prefix that SageMaker mounts at
/opt/ml/model (server-side copies: the weights never pass through the deploy function).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from string import Template

from workflows.contracts import ArtifactManifest, Finding
from workflows.hosting.specs import TritonHosting
from workflows.preflight.triton import MIN_WEIGHT_BYTES, check_config_syntax, expected_file, parse_config

MODEL, TOKENIZER, ENSEMBLE = "model", "tokenizer", "ensemble"
ONNX_TYPE = "TYPE_INT64"  # the tokenizer's ids and masks, exported as int64 (workflows/conversion/export.py)
OUTPUT_TYPE = "TYPE_FP32"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
# The Triton image's Python has no ``tokenizers`` package, and Triton runs no install step: pack stages
# the wheel (workflows/artifact/vendoring.py) and the python-backend model unpacks it at load.
TOKENIZER_WHEEL = "triton/tokenizers.whl"
# Triton 26.05 is Ubuntu 24.04, whose python3 the python backend runs; tokenizers' wheel is abi3 (cp310+).
TRITON_PYTHON = "3.12"


@dataclass(frozen=True)
class PlannedFile:
    """One file of the repository: generated text, or a copy of an object of the staging folder."""

    path: str
    text: str | None = None
    source: str | None = None
    size_bytes: int = 0


def _template(name: str) -> Template:
    return Template((files("artifacts") / "triton" / name).read_text(encoding="utf-8"))


def _tensor(name: str, data_type: str, dims: str) -> str:
    return f'  {{\n    name: "{name}"\n    data_type: {data_type}\n    dims: [ {dims} ]\n  }}'


def _tensors(names: list[str], data_type: str, dims: str) -> str:
    # Protobuf text format: elements separated by commas (",\n".join, never "\n".join: F19).
    return ",\n".join(_tensor(n, data_type, dims) for n in names)


def _maps(kind: str, names: list[str]) -> str:
    return "\n".join(f'      {kind} {{ key: "{n}" value: "{n}" }}' for n in names)


def _token_dims(hosting: TritonHosting) -> str:
    """A tensor's dims past the batch: Triton adds the batch dimension itself when it batches."""
    return "-1" if hosting.max_batch_size > 0 else "-1, -1"


def model_config(manifest: ArtifactManifest, hosting: TritonHosting, *, gpu: bool) -> str:
    """config.pbtxt of the ONNX model: its inputs (int64 [batch, tokens]) and output (fp32 [batch, n])."""
    batched = hosting.max_batch_size > 0
    return _template("model.pbtxt").substitute(
        name=MODEL,
        max_batch_size=hosting.max_batch_size,
        inputs=_tensors(manifest.inputs, ONNX_TYPE, _token_dims(hosting)),
        outputs=_tensors(manifest.outputs, OUTPUT_TYPE, _token_dims(hosting)),
        count=hosting.instances_per_device,
        kind="KIND_GPU" if gpu else "KIND_CPU",
        batching="dynamic_batching { }" if hosting.dynamic_batching and batched else "",
    )


def tokenizer_config(manifest: ArtifactManifest, hosting: TritonHosting) -> str:
    return _template("tokenizer.pbtxt").substitute(
        name=TOKENIZER,
        max_batch_size=hosting.max_batch_size,
        outputs=_tensors(manifest.inputs, ONNX_TYPE, _token_dims(hosting)),
        count=hosting.instances_per_device,
        max_length=manifest.max_sequence_length,
        output_names=",".join(manifest.inputs),
    )


def ensemble_config(manifest: ArtifactManifest, hosting: TritonHosting) -> str:
    return _template("ensemble.pbtxt").substitute(
        name=ENSEMBLE,
        max_batch_size=hosting.max_batch_size,
        outputs=_tensors(manifest.outputs, OUTPUT_TYPE, _token_dims(hosting)),
        tokenizer=TOKENIZER,
        model=MODEL,
        tokenizer_outputs=_maps("output_map", manifest.inputs),
        model_inputs=_maps("input_map", manifest.inputs),
        model_outputs=_maps("output_map", manifest.outputs),
    )


def _size(manifest: ArtifactManifest, path: str) -> int:
    return next((f.size_bytes for f in manifest.files if f.path == path), 0)


def plan_repository(manifest: ArtifactManifest, hosting: TritonHosting, *, gpu: bool) -> list[PlannedFile]:
    """Every file of the repository, relative to its root."""
    planned = [
        PlannedFile(f"{MODEL}/config.pbtxt", text=model_config(manifest, hosting, gpu=gpu)),
        PlannedFile(
            f"{MODEL}/1/model.onnx", source=manifest.onnx_file, size_bytes=_size(manifest, manifest.onnx_file)
        ),
    ]
    if hosting.tokenizer_ensemble:
        code = (files("artifacts") / "triton" / "tokenizer_model.py").read_text(encoding="utf-8")
        planned += [
            PlannedFile(f"{TOKENIZER}/config.pbtxt", text=tokenizer_config(manifest, hosting)),
            PlannedFile(f"{TOKENIZER}/1/model.py", text=code),
            PlannedFile(f"{TOKENIZER}/1/{TOKENIZER_WHEEL.rsplit('/', 1)[-1]}", source=TOKENIZER_WHEEL),
            *(
                PlannedFile(
                    f"{TOKENIZER}/1/{name}",
                    source=f"tokenizer/{name}",
                    size_bytes=_size(manifest, f"tokenizer/{name}"),
                )
                for name in TOKENIZER_FILES
                if any(f.path == f"tokenizer/{name}" for f in manifest.files)
            ),
            PlannedFile(f"{ENSEMBLE}/config.pbtxt", text=ensemble_config(manifest, hosting)),
            # An ensemble has no model file, but Triton wants its version folder; S3 has no empty folders.
            PlannedFile(f"{ENSEMBLE}/1/README", text="ensemble: no model file; see ../config.pbtxt\n"),
        ]
    return planned


def default_model(hosting: TritonHosting) -> str:
    """The model /invocations reaches (SAGEMAKER_TRITON_DEFAULT_MODEL_NAME)."""
    return ENSEMBLE if hosting.tokenizer_ensemble else MODEL


def check_plan(planned: list[PlannedFile]) -> list[Finding]:
    """F19, F23 and F22 on the planned repository, with the same rules the preflight applies to a folder."""
    findings: list[Finding] = []
    paths = {p.path: p for p in planned}
    for config in (p for p in planned if p.path.endswith("/config.pbtxt")):
        folder = config.path.rsplit("/", 1)[0]
        syntax = check_config_syntax(config.text or "", origin=config.path)
        if syntax:
            findings += syntax
            continue
        wanted = expected_file(parse_config(config.text or ""))
        if wanted is None:
            continue
        target = paths.get(f"{folder}/1/{wanted}")
        present = sorted(p.rsplit("/", 1)[-1] for p in paths if p.startswith(f"{folder}/1/"))
        if target is None:
            findings.append(
                Finding(
                    id="F23",
                    severity="blocking",
                    message=f"{folder}/1 would hold {present} but its backend loads {wanted}: Triton answers "
                    "'unable to find backend library' / fails to load the model.",
                    fix=f"name the file {wanted}, or set default_model_filename",
                    evidence=f"{folder}: expected {wanted}, found {present}",
                )
            )
        elif target.source is not None and target.size_bytes < MIN_WEIGHT_BYTES:
            findings.append(
                Finding(
                    id="F22",
                    severity="blocking",
                    message=f"{target.source} is {target.size_bytes} bytes: missing or truncated; Triton would "
                    "stop with 'failed to load all models' though the config is valid.",
                    fix="convert again; every weight file must be complete (at least 1 MB)",
                    evidence=f"{target.path} <- {target.source}: {target.size_bytes} bytes",
                )
            )
    return findings
