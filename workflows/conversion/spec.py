"""The spec's ``convert`` and ``pack`` sections (re-exported by ``workflows.spec.pipeline``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from workflows.models import Strict

# A share, a cosine or a distance between two histograms: the INT8 guard's floors and ceilings.
Fraction = Annotated[float, Field(ge=0, le=1)]


class ConvertSpec(Strict):
    opset: int = Field(17, ge=14, le=21, description="ONNX opset for the export (14-21).")
    precision: Literal["fp32", "int8", "fp16", "auto"] = Field(
        "fp32",
        description=(
            "Weights of the served graph: 'fp32'; 'int8' (dynamic quantization, or static with engine "
            "'openvino'; refused when it diverges from fp32 on the validation set, F29); or 'fp16' for GPU targets only (LayerNorm, Softmax and "
            "DeBERTa's relative attention stay fp32; refused when it diverges from fp32, F29). fp16 is refused "
            "for CPU targets: onnxruntime's CPU execution provider has no fast fp16 kernels. 'auto' picks, for "
            "the first instance type, the fastest artifact measured at cosine >= 0.999 to fp32 (precision and "
            "engine both; precision_basis says what it chose and why)."
        ),
    )
    precision_basis: str = Field(
        "", description="Written by precision 'auto': the precision and engine it chose, and why."
    )
    engine: Literal["onnxruntime", "tensorrt", "openvino"] = Field(
        "onnxruntime",
        description=(
            "How the endpoint runs the graph: 'onnxruntime' (its CPU or CUDA execution provider); 'tensorrt' "
            "(GPU targets: onnxruntime's TensorRT execution provider, engines built per benchmark shape at "
            "warmup and cached under the model folder, F21); or 'openvino' (CPU targets: OpenVINO's CPU "
            "plugin runs the plain export, in bf16 where the CPU has AVX512-BF16 or AMX unless "
            "convert.inference_precision is 'f32'; the served precision is reported as computed)."
        ),
    )
    inference_precision: Literal["runtime", "f32"] = Field(
        "runtime",
        description=(
            "engine 'openvino': 'runtime' lets OpenVINO pick (bf16 on CPUs with AVX512-BF16 or AMX, f32 "
            "elsewhere); 'f32' forces fp32 compute."
        ),
    )
    optimize: Literal["auto", "fused", "none"] = Field(
        "auto",
        description=(
            "Offline fusion: 'auto' keeps the fused graph (BERT/XLM-R) only when it passes parity and is not "
            "slower than the plain export on the build host; 'fused' keeps it when it passes parity; 'none' "
            "ships the plain export (onnxruntime still fuses at session load)."
        ),
    )
    parity_tolerance: float = Field(
        1e-3, gt=0, le=0.1, description="Largest absolute difference allowed between ONNX and PyTorch."
    )
    optimizer_timeout_s: int = Field(
        300,
        ge=1,
        le=840,
        description="Time bound of each graph pass (fusion, quantization), seconds; past it the pass is dropped (F34).",
    )
    optimizer_memory_gib: float = Field(
        6.0,
        gt=0,
        le=64,
        description=(
            "Address-space bound of each graph pass, GiB. The convert Lambda has 10 GB: 6 leaves room for "
            "the step itself. A pass that needs more is dropped with a warning (F34)."
        ),
    )
    # The INT8 guard's floors (F29). Measured, INT8 against fp32 on the 64-input validation set:
    # MiniLM embeddings min cosine 0.989 with outlier channels in fp32, 0.959 without (worst on
    # the shortest inputs); a MiniLM encoder with a random 3-way head (median top-2 margin 0.009
    # logits, far below a trained head's) kept 95% of its top labels, shift 0.05; random XLM-R and
    # DeBERTa-v2 classifiers kept 100%. Variation kept: 0.98-1.3 on every healthy graph (noise only
    # adds spread), 0.000 on deliberately collapsed ones (tests/models/test_convert_int8.py).
    int8_min_cosine: Fraction = Field(
        0.98, description="INT8 guard: lowest per-text cosine to fp32 accepted (embeddings)."
    )
    int8_min_agreement: Fraction = Field(
        0.9, description="INT8 guard: lowest share of inputs keeping their top label (classifiers)."
    )
    int8_max_distribution_shift: Fraction = Field(
        0.2, description="INT8 guard: largest total variation distance between predicted-label histograms."
    )
    int8_min_variation_kept: float = Field(
        0.5,
        ge=0,
        le=10,
        description="INT8 guard: least share of fp32's input-dependent output spread kept (near 0 = collapsed).",
    )

    @field_validator("precision", mode="before")
    @classmethod
    def _fp16_names(cls, value: Any) -> Any:
        if isinstance(value, str) and value.lower() in ("fp16", "float16", "half"):
            return "fp16"
        return value


FP16_ON_CPU = (
    "fp16 is refused for CPU targets: onnxruntime's CPU execution provider runs no fast fp16 kernels, so "
    "the graph fills with Cast(to=FLOAT) nodes and gets slower (128 on mDeBERTa, F29); use 'fp32', "
    "or 'int8' for a smaller and faster CPU graph, or a GPU instance type for fp16"
)
TENSORRT_ON_CPU = (
    "engine 'tensorrt' needs a GPU target: the first hosting.instance_type_fallbacks entry is a CPU type; use "
    "engine 'onnxruntime', or a GPU instance type (ml.g5.xlarge, ml.g6.xlarge...)"
)

OPENVINO_ON_GPU = (
    "engine 'openvino' needs a CPU target: the first hosting.instance_type_fallbacks entry is a GPU type; use "
    "engine 'onnxruntime' or 'tensorrt' on GPUs, or a CPU instance type (ml.c7i.xlarge, ml.m7a.xlarge...)"
)


class PackSpec(Strict):
    compression: Literal["fast", "none"] = Field(
        "fast",
        description="'fast' (gzip level 1 via ISA-L) or 'none' (plain tar; SageMaker accepts it).",
    )
