"""The artifact manifest: what a converted model folder holds and what the server must load.

Written by the convert step at the artifact root (``workflows/conversion/manifest.py`` names the
file); read by pack, preflight, the hosting modes and the serving code. ``workflows.contracts``
re-exports these models with the rest of the execution state.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from workflows.models import Contract


class FileEntry(Contract):
    path: str = Field(description="Path relative to the artifact root.")
    size_bytes: int
    sha256: str


class ParityReport(Contract):
    texts: int
    max_abs_diff: float
    min_cosine: float
    tolerance: float
    passed: bool


class QuantizationReport(Contract):
    """How the INT8 (or fp16) graph was made and how it compares with fp32 on the validation set (F29)."""

    method: str
    fp32_nodes: int = Field(0, description="Nodes kept in fp32 (outlier-channel MatMuls).")
    outlier_channels: int = Field(0, description="Activation channels computed in fp32.")
    texts: int
    min_cosine: float = Field(description="Lowest per-text cosine between INT8 and fp32 outputs.")
    mean_cosine: float
    variation_kept: float = Field(
        description="Norm of INT8's input-dependent output spread over fp32's (near 0: collapsed)."
    )
    argmax_agreement: float | None = Field(None, description="Classifiers: share of equal top labels.")
    distribution_shift: float | None = Field(
        None, description="Classifiers: total variation distance between the predicted-label histograms."
    )
    thresholds: dict[str, float]
    passed: bool
    diagnosis: str
    size_ratio: float = Field(description="INT8 file size over fp32 file size.")


class HubRecord(Contract):
    """Where an ``hf://`` model came from: the revision the spec named and the commit downloaded."""

    repo: str
    revision: str = Field(
        description="As the run's spec named it: a branch, tag or commit (`deploybench run` pins a branch to its commit)."
    )
    commit: str = Field(description="The 40-hex commit the revision resolved to; the weights are its.")


class TensorrtProfile(Contract):
    """One TensorRT optimization profile: the shapes of one benchmark shape (F21: one engine each)."""

    shape: str = Field(description="The benchmark shape it serves, e.g. b8/128 or b1/natural.")
    min_batch: int
    max_batch: int
    min_length: int
    opt_length: int
    max_length: int


class ServingPlan(Contract):
    """Where and how the serving code runs the graph; ``code/inference.py`` checks it at load (F36)."""

    device: Literal["cpu", "gpu"] = "cpu"
    engine: Literal["cpu", "cuda", "tensorrt"] = Field(
        "cpu", description="Provider family: the first of ``providers`` must be the active one."
    )
    providers: list[str] = Field(default_factory=lambda: ["CPUExecutionProvider"])
    requirement: str = Field("", description="The onnxruntime line of code/requirements.txt.")
    runtime: Literal["onnxruntime", "openvino"] = Field(
        "onnxruntime", description="What runs the graph: onnxruntime's providers, or OpenVINO's CPU plugin."
    )
    runtime_requirement: str = Field(
        "", description="OpenVINO: its line of code/requirements.txt (beside onnxruntime's)."
    )
    inference_precision: Literal["", "f32"] = Field(
        "",
        description="OpenVINO: '' lets the CPU plugin pick (bf16 with AVX512-BF16 or AMX); 'f32' forces fp32.",
    )
    cuda_major: int | None = Field(None, description="GPU: the CUDA major the onnxruntime-gpu build needs.")
    cudnn_major: int | None = Field(None, description="GPU: the cuDNN major it needs.")
    tensorrt_profiles: list[TensorrtProfile] = Field(
        default_factory=list, description="TensorRT: one profile per benchmark shape, built at warmup."
    )


class TokenizerFiles(Contract):
    """How the serving code reads ``tokenizer/`` and what wrote it (F35: a newer transformers writes
    classes an older container cannot import)."""

    loader: Literal["tokenizers", "transformers"] = Field(
        description="tokenizers: tokenizer.json read by the tokenizers library, portable across transformers."
    )
    tokenizer_class: str = Field("", description="tokenizer_config.json's tokenizer_class.")
    saved_by: dict[str, str] = Field(
        default_factory=dict, description="Library versions that wrote the files (transformers, tokenizers)."
    )
    checked_texts: int = Field(
        0, description="Texts and pairs whose ids the loader reproduced at conversion."
    )


class ArtifactManifest(Contract):
    """What the server must load: written at the artifact root under ``MANIFEST_FILE``
    (workflows/conversion/manifest.py; the serving code reads the same name)."""

    schema_version: Literal[1] = 1
    task: Literal["embedding", "classification", "reranking"]
    architecture: str
    onnx_file: str = Field(description="The exact ONNX file the server loads (F30).")
    inputs: list[str]
    outputs: list[str]
    opset: int
    precision: Literal["fp32", "int8", "fp16"]
    max_sequence_length: int
    labels: list[str] = Field(default_factory=list)
    pooling: Literal["mean", "cls", "last_token"] | None = Field(
        None, description="Embeddings: the pooling inside the graph, and what it was read from."
    )
    normalize: bool = Field(False, description="Embeddings: the graph L2-normalises its vectors.")
    pooling_basis: str = Field("", description="Embeddings: where the pooling choice came from.")
    hub: HubRecord | None = Field(None, description="hf:// sources: the repo, revision and commit converted.")
    onnxruntime_version: str
    optimization: str
    parity: ParityReport = Field(description="The fp32 graph against PyTorch.")
    quantization: QuantizationReport | None = Field(
        None, description="INT8 and fp16: the reduced-precision graph against fp32 (F29)."
    )
    serving: ServingPlan = Field(default_factory=ServingPlan, description="Device, providers, requirement.")
    tokenizer: TokenizerFiles | None = Field(None, description="How the tokenizer is served (F35).")
    warnings: list[str] = Field(
        default_factory=list, description="Fallbacks taken (e.g. an optimizer past its bound)."
    )
    files: list[FileEntry]
