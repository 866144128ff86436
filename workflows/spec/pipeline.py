"""The run specification: what to convert, how to host it, what to measure.

A spec is YAML validated by pydantic; ``deploybench schema`` prints its JSON Schema. Every
field's description says what values it takes, and a malformed spec is reported as
``SpecInvalid`` naming the field, the value and that description.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import Field, StringConstraints, ValidationError, field_validator, model_validator

from workflows.conversion.auto_precision import auto_choice
from workflows.conversion.spec import FP16_ON_CPU, OPENVINO_ON_GPU, TENSORRT_ON_CPU
from workflows.conversion.spec import ConvertSpec as ConvertSpec
from workflows.conversion.spec import PackSpec as PackSpec
from workflows.errors import SpecInvalid
from workflows.gpu.device import ARTIFACT_MODES, artifact_device
from workflows.hosting.network import JobSecured
from workflows.hosting.specs import Hosting, RealtimeHosting
from workflows.images.accelerators import is_gpu_instance
from workflows.models import Strict
from workflows.remediation.spec import RemediationSpec as RemediationSpec
from workflows.spec.enums import ProcessingInstanceType, Word
from workflows.spec.errors import EACH_LINE_FIX, explain
from workflows.spec.model import BUNDLED_MODEL as BUNDLED_MODEL
from workflows.spec.model import SOURCE_FORMS as SOURCE_FORMS
from workflows.spec.model import ModelSpec as ModelSpec

__all__ = [
    "explain",
    "Hosting",
    "RealtimeHosting",
    "RunSpec",
    "is_gpu_instance",
    "load_spec",
    "parse_spec",
]

_NAME = re.compile(r"^[a-z0-9](-?[a-z0-9])*$")
# AWS allows 50 tags per resource; deploybench adds its own (run id, managed, expiry...).
MAX_USER_TAGS = 40
MAX_SHAPE_VALUES = 16


class WaitSpec(Strict):
    # Defaults measured by bench/stall_recognition.py: a stall is named ~8.4 simulated minutes after
    # CreateEndpoint (target <= 10; the field waited 50), and a 10-minute Creating costs 26 state
    # transitions on paper, 28 measured (target <= 30). The threshold must stay below 10 min less one
    # poll_max_s gap.
    poll_initial_s: int = Field(20, ge=1, le=600, description="First wait between status polls, seconds.")
    poll_max_s: int = Field(120, ge=1, le=3600, description="Longest wait between polls, seconds.")
    backoff: float = Field(1.5, ge=1.0, le=4.0, description="Factor applied to the wait after each poll.")
    timeout_min: int = Field(60, ge=1, le=720, description="Give up waiting for InService after this long.")
    stall_threshold_min: int = Field(
        8,
        ge=1,
        le=120,
        description=(
            "Creating with no ProductionVariants and a frozen LastModifiedTime for this long is a "
            "capacity stall (F06)."
        ),
    )

    @model_validator(mode="after")
    def _ordered(self) -> WaitSpec:
        if self.poll_initial_s > self.poll_max_s:
            raise ValueError(
                f"poll_initial_s {self.poll_initial_s} exceeds poll_max_s {self.poll_max_s}; "
                "make the first wait at most the longest"
            )
        if self.stall_threshold_min >= self.timeout_min:
            raise ValueError(
                f"stall_threshold_min {self.stall_threshold_min} is not below timeout_min {self.timeout_min}: "
                "a capacity stall could never be named; lower the threshold or raise the timeout"
            )
        return self


Natural = Literal["natural"]

WARM_CHECK_ALLOWANCE_S = 15.0
"""Planned time for the warm check before each shape is measured (the shape was warmed already)."""
LAMBDA_BENCHMARK_BUDGET_S = 840.0
"""What a benchmark Lambda may spend measuring: its 900 s limit less a minute of margin."""


class BenchmarkSpec(JobSecured):
    batch_sizes: list[int] = Field(
        default_factory=lambda: [1, 8],
        min_length=1,
        description="Batch sizes to measure; each is sent as parameters.batch_size (F31).",
    )
    sequence_lengths: list[int | Natural] = Field(
        default_factory=lambda: list[int | Natural](["natural", 128]),
        min_length=1,
        description=(
            "Token lengths to measure: an integer pads every text to that length (F32); 'natural' "
            "sends realistic texts unpadded."
        ),
    )
    concurrency: list[int] = Field(
        default_factory=lambda: [1, 4],
        min_length=1,
        description=(
            "Concurrent clients per shape. Unset: 1 and 4 (throughput needs two points), capped at "
            "what the hosting takes (serverless max_concurrency, the instance type's vCPUs)."
        ),
    )
    windows: Literal["auto", "time", "count"] = Field(
        "auto",
        description=(
            "What closes a measurement window: 'count', a third of the requests the figures need "
            "(max(299, min_requests): p99's 95% upper bound needs 299); 'time', min_duration_s / 3; "
            "'auto' (default), both. The last three windows are kept and must agree."
        ),
    )
    min_duration_s: float = Field(5.0, gt=0, le=3600, description="Measure each shape at least this long.")
    min_requests: int = Field(30, ge=1, le=1_000_000, description="...and at least this many requests.")
    max_duration_s: float = Field(
        60.0, gt=0, le=7200, description="Stop measuring a shape after this long even if not stable."
    )
    warmup_max_requests: int = Field(
        200, ge=1, le=100_000, description="Warmup gives up on a shape after this many requests."
    )
    warmup_max_s: float = Field(
        600.0,
        gt=0,
        le=7200,
        description=(
            "Warmup gives up on a shape after this many seconds (a TensorRT engine compiles per shape "
            "for a minute or more, F21)."
        ),
    )
    seed: int = Field(0, ge=0, le=2**32 - 1, description="Seed for the generated texts (0 to 2**32-1).")
    runner: Literal["auto", "lambda", "processing-job"] = Field(
        "auto",
        description=(
            "Where the load generator runs: 'lambda' (short CPU runs, 15-minute limit), 'processing-job' "
            "(a SageMaker processing job next to the endpoint, no time limit), or 'auto' (a processing "
            "job for GPU instance types, when the planned measurement exceeds 12 minutes, or when warmup "
            "did not finish)."
        ),
    )
    job_instance_type: ProcessingInstanceType = Field(
        "ml.c5.xlarge",
        description="Instance type of the benchmark processing job (the load generator; botocore's "
        "ProcessingInstanceType), e.g. ml.c5.xlarge.",
    )
    job_image: Word | None = Field(
        None,
        description=(
            "Image of the benchmark processing job (python3 with boto3 and numpy); empty picks the HF "
            "PyTorch inference DLC (CPU) of the region."
        ),
    )

    def planned_seconds(self) -> float:
        """Longest time the measurement can take: every shape's warm check plus every measurement
        running to ``max_duration_s``."""
        shapes = len(self.batch_sizes) * len(self.sequence_lengths)
        return shapes * (WARM_CHECK_ALLOWANCE_S + len(self.concurrency) * self.max_duration_s)

    @field_validator("batch_sizes", "concurrency")
    @classmethod
    def _positive(cls, value: list[int]) -> list[int]:
        if any(not 1 <= v <= 1024 for v in value):
            raise ValueError("every value must be between 1 and 1024")
        return value

    @field_validator("sequence_lengths")
    @classmethod
    def _lengths(cls, value: list[int | str]) -> list[int | str]:
        if any(isinstance(v, int) and not 1 <= v <= 8192 for v in value):
            raise ValueError("integer sequence lengths must be between 1 and 8192")
        return value

    @field_validator("batch_sizes", "sequence_lengths", "concurrency")
    @classmethod
    def _distinct(cls, value: list[Any]) -> list[Any]:
        if len(value) > MAX_SHAPE_VALUES:
            raise ValueError(f"{len(value)} values; at most {MAX_SHAPE_VALUES}")
        repeated = sorted({str(v) for v in value if value.count(v) > 1})
        if repeated:
            raise ValueError(f"values repeat ({', '.join(repeated)}); list each once")
        return value

    @model_validator(mode="after")
    def _durations(self) -> BenchmarkSpec:
        if self.max_duration_s < self.min_duration_s:
            raise ValueError("max_duration_s must be at least min_duration_s")
        if self.runner == "lambda" and self.planned_seconds() > LAMBDA_BENCHMARK_BUDGET_S:
            raise ValueError(
                f"runner 'lambda' cannot hold this benchmark: it may take {self.planned_seconds():.0f} s, more "
                f"than the {LAMBDA_BENCHMARK_BUDGET_S:.0f} s a Lambda can give it (15-minute limit); use "
                "runner 'processing-job' or 'auto', or lower max_duration_s or the number of shapes"
            )
        return self


class PreflightSpec(Strict):
    accept: list[Annotated[str, StringConstraints(pattern=r"^F\d{2}$")]] = Field(
        default_factory=list,
        description=(
            "Failure IDs whose blocking findings you accept (e.g. [F14] when you know the model fits "
            "a smaller serverless size than the estimate): reported as warnings and the run goes on; "
            "if AWS then fails it, diagnosis and remediation apply as usual."
        ),
    )

    @field_validator("accept")
    @classmethod
    def _once(cls, value: list[str]) -> list[str]:
        repeated = sorted({v for v in value if value.count(v) > 1})
        if repeated:
            raise ValueError(f"IDs repeat ({', '.join(repeated)}); list each once")
        return value


def _tag_character(char: str) -> bool:
    """One character of botocore's TagKey/TagValue pattern ``[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]``."""
    return unicodedata.category(char)[0] in "LZN" or char in "_.:/=+-@"


class RunSpec(Strict):
    """One run: convert, pack, deploy, warm up, benchmark, tear down."""

    name: str = Field(
        ...,
        min_length=1,
        max_length=24,
        description="Short lowercase name (letters, digits, single dashes), used in resource names.",
    )
    model: ModelSpec = Field(default_factory=ModelSpec)
    convert: ConvertSpec = Field(default_factory=ConvertSpec)
    pack: PackSpec = Field(default_factory=PackSpec)
    hosting: Hosting = Field(default_factory=RealtimeHosting)
    wait: WaitSpec = Field(default_factory=WaitSpec)
    benchmark: BenchmarkSpec = Field(default_factory=BenchmarkSpec)
    preflight: PreflightSpec = Field(default_factory=PreflightSpec)
    remediation: RemediationSpec = Field(default_factory=RemediationSpec)
    keep_endpoint: bool = Field(
        False, description="Leave the endpoint running after the benchmark (you pay for it until deleted)."
    )
    tags: dict[str, str] = Field(
        default_factory=dict,
        max_length=MAX_USER_TAGS,
        description=f"Extra tags on every resource: at most {MAX_USER_TAGS}, keys of 1-128 characters not "
        "starting with 'aws:', values of at most 256.",
    )

    @model_validator(mode="before")
    @classmethod
    def _default_mode(cls, data: Any) -> Any:
        hosting = data.get("hosting") if isinstance(data, dict) else None
        if isinstance(hosting, dict) and "mode" not in hosting:
            return {**data, "hosting": {"mode": "realtime", **hosting}}
        return data

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(
                "use lowercase letters, digits and single dashes, starting and ending with a letter or digit"
            )
        return value

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: dict[str, str]) -> dict[str, str]:
        for key, text in value.items():
            if not 1 <= len(key) <= 128 or key.lower().startswith("aws:") or len(text) > 256:
                raise ValueError(
                    f"tag {key!r}: {text!r} is refused by AWS; keys take 1-128 characters and may not start "
                    "with 'aws:', values at most 256"
                )
            bad = sorted({c for c in key + text if not _tag_character(c)})
            if bad:
                raise ValueError(
                    f"tag {key!r}: {text!r} holds {bad}, which SageMaker's tag pattern refuses (botocore "
                    "TagKey/TagValue: letters, digits, spaces and _ . : / = + - @ only); drop or replace them"
                )
        return value

    @model_validator(mode="after")
    def _auto_precision(self) -> RunSpec:
        if self.convert.precision != "auto":
            return self
        types = getattr(self.hosting, "instance_type_fallbacks", None) or []
        choice = auto_choice(
            types[0] if types else None, device=artifact_device(self.hosting), task=self.model.task
        )
        convert = self.convert.model_copy(
            update={"precision": choice.precision, "engine": choice.engine, "precision_basis": choice.basis}
        )
        return self.model_copy(update={"convert": convert})

    @model_validator(mode="after")
    def _gpu_convert(self) -> RunSpec:
        if self.convert.engine == "tensorrt" and self.hosting.mode not in ARTIFACT_MODES:
            raise ValueError(
                f"convert.engine: 'tensorrt' is run by code/inference.py, which hosting mode {self.hosting.mode!r} "
                f"does not serve; use one of {', '.join(ARTIFACT_MODES)}, or engine 'onnxruntime'"
            )
        if artifact_device(self.hosting) == "cpu":
            if self.convert.precision == "fp16":
                raise ValueError(f"convert.precision: {FP16_ON_CPU}")
            if self.convert.engine == "tensorrt":
                raise ValueError(f"convert.engine: {TENSORRT_ON_CPU}")
        elif self.convert.engine == "openvino":
            raise ValueError(f"convert.engine: {OPENVINO_ON_GPU}")
        return self

    @model_validator(mode="after")
    def _task_served(self) -> RunSpec:
        if self.model.task == "reranking" and self.hosting.mode in ("lmi", "vllm"):
            raise ValueError(
                f"model.task 'reranking' is served by code/inference.py (a query with passages in, scores out), "
                f"which hosting mode {self.hosting.mode!r} does not run; use realtime, serverless, inference-component, "
                "scale-to-zero or multi-container"
            )
        return self

    @model_validator(mode="after")
    def _sequence_fits(self) -> RunSpec:
        too_long = [
            v
            for v in self.benchmark.sequence_lengths
            if isinstance(v, int) and v > self.model.max_sequence_length
        ]
        if too_long:
            raise ValueError(
                f"benchmark.sequence_lengths {too_long} exceed model.max_sequence_length "
                f"{self.model.max_sequence_length}; raise model.max_sequence_length or drop those lengths"
            )
        return self


def parse_spec(data: Any, *, origin: str = "spec") -> RunSpec:
    """Validate a spec mapping.

    Raises:
        SpecInvalid: naming every bad field and its fix.
    """
    if data is None:
        raise SpecInvalid(f"{origin} is empty.", fix="write a spec: start from examples/minilm-realtime.yaml")
    if not isinstance(data, dict):
        kinds: dict[type, str] = {list: "a list", str: "a single string"}
        kind = kinds.get(type(data), type(data).__name__)
        raise SpecInvalid(
            f"{origin} must be a mapping of fields (name: ..., model: ..., hosting: ...), got {kind}.",
            fix="write the fields at the top level without a leading '-'; start from examples/minilm-realtime.yaml",
        )
    try:
        return RunSpec.model_validate(data)
    except ValidationError as error:
        raise SpecInvalid(f"{origin} is invalid:\n{explain(error, RunSpec)}", fix=EACH_LINE_FIX) from None


def load_spec(path: str | Path) -> RunSpec:
    """Read and validate a YAML spec file.

    Raises:
        SpecInvalid: when the file is missing, is not YAML, or does not validate.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecInvalid(f"spec file {path} does not exist.", fix="pass the path of a YAML spec") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as error:
        raise SpecInvalid(
            f"spec file {path} cannot be read: {error}.", fix="pass a readable YAML file"
        ) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise SpecInvalid(f"spec file {path} is not valid YAML: {error}", fix="fix the YAML syntax") from None
    if isinstance(data, dict) and {"base", "matrix"} <= data.keys():
        raise SpecInvalid(
            f"{path} is a sweep (base + matrix), not a run spec.",
            fix=f"run it with `deploybench sweep {path}`",
        )
    return parse_spec(data, origin=f"spec file {path}")


def json_schema() -> str:
    """The spec's JSON Schema, for editors and CI."""
    return json.dumps(RunSpec.model_json_schema(), indent=2)
