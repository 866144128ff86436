"""The ``hosting`` section of a run spec: one member per hosting mode, discriminated by ``mode``.

Kept apart from ``workflows.spec.pipeline`` (which imports it) so that each mode's settings sit next to each
other; every member is frozen and refuses unknown fields, and every field says what it accepts.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import Field, field_validator, model_validator

from workflows.hosting.cohosted import CoHostedModel, ComponentModel, LmiModel, _unique_names
from workflows.hosting.spec_bases import (
    _IMAGE_VERSION,
    MAX_CONTAINERS,
    MAX_INSTANCE_TYPES,
    MAX_PROVISIONED_CONCURRENCY,
    SERVERLESS_MEMORY_MB,
    _Instances,
    _ModelServer,
)
from workflows.hosting.tracing import refuse_serverless_tracing
from workflows.spec.enums import EndpointInstanceType, Word


class RealtimeHosting(_Instances, _ModelServer):
    mode: Literal["realtime"] = Field("realtime", description="Real-time endpoint on the HF inference DLC.")


class MultiContainerHosting(_Instances, _ModelServer):
    mode: Literal["multi-container"] = Field(
        "multi-container",
        description="Several HF DLC containers on one CPU endpoint (InferenceExecutionConfig Direct), each "
        "invoked with TargetContainerHostname.",
    )
    models: list[CoHostedModel] = Field(
        ...,
        min_length=1,
        description=(
            "The other containers next to the run's own (hostname 'main'): at least one, at most "
            f"{MAX_CONTAINERS - 1}."
        ),
    )

    @field_validator("models")
    @classmethod
    def _models(cls, value: list[CoHostedModel]) -> list[CoHostedModel]:
        _unique_names(value)
        if len(value) + 1 > MAX_CONTAINERS:
            raise ValueError(
                f"{len(value) + 1} containers; a multi-container endpoint takes at most {MAX_CONTAINERS}"
            )
        return value


class ServerlessHosting(_ModelServer):
    mode: Literal["serverless"] = Field(
        "serverless", description="Serverless endpoint on the HF inference DLC."
    )
    memory_size_mb: int = Field(
        3072,
        description="ServerlessConfig.MemorySizeInMB: 1024, 2048, 3072, 4096, 5120 or 6144 (F14).",
    )
    max_concurrency: int = Field(5, ge=1, le=200, description="ServerlessConfig.MaxConcurrency (1-200).")
    provisioned_concurrency: int | None = Field(
        None,
        ge=1,
        le=MAX_PROVISIONED_CONCURRENCY,
        description=(
            "ServerlessConfig.ProvisionedConcurrency (1-200, at most max_concurrency): that many concurrent "
            "requests find a warm container, with no cold start (F15, F16). Billed for as long as the "
            "endpoint exists, at its own rate (the cost section prices it). Empty: on demand."
        ),
    )
    image: Word | None = Field(
        None, description="Container image URI; empty picks the HF PyTorch inference DLC (CPU)."
    )
    image_version: str | None = Field(None, description=_IMAGE_VERSION)

    @model_validator(mode="before")
    @classmethod
    def _untraced(cls, data: Any) -> Any:
        return refuse_serverless_tracing(data)

    @field_validator("memory_size_mb")
    @classmethod
    def _memory(cls, value: int) -> int:
        if value not in SERVERLESS_MEMORY_MB:
            raise ValueError(
                f"{value} MB is not accepted; use one of {', '.join(map(str, SERVERLESS_MEMORY_MB))}"
            )
        return value

    @model_validator(mode="after")
    def _provisioned(self) -> Any:
        if self.provisioned_concurrency is not None and self.provisioned_concurrency > self.max_concurrency:
            raise ValueError(
                f"provisioned_concurrency {self.provisioned_concurrency} is above max_concurrency "
                f"{self.max_concurrency}; SageMaker requires provisioned <= max: lower it or raise max_concurrency"
            )
        return self


class InferenceComponentHosting(_Instances, _ModelServer):
    mode: Literal["inference-component"] = Field(
        "inference-component",
        description="An endpoint with ManagedInstanceScaling and one inference component per model.",
    )
    copies: int = Field(1, ge=1, le=100, description="RuntimeConfig.CopyCount of each component.")
    accelerator_devices: int | None = Field(
        None,
        ge=1,
        le=8,
        description=(
            "ComputeResourceRequirements.NumberOfAcceleratorDevicesRequired: required on GPU instances "
            "(F08), whole devices only; copies x devices of all components must fit the GPUs (F09)."
        ),
    )
    min_memory_mb: int = Field(
        1024,
        ge=128,
        le=1_048_576,
        description=(
            "ComputeResourceRequirements.MinMemoryRequiredInMb. Container and server overhead is large: on "
            "ml.g5.xlarge (16 GB) 6144 and 2048 failed, 1024 worked (F10)."
        ),
    )
    cpu_cores: float | None = Field(
        None,
        ge=0.25,
        le=192,
        description="ComputeResourceRequirements.NumberOfCpuCoresRequired (at least 0.25, botocore's "
        "NumberOfCpuCores); empty leaves it out.",
    )
    gpu_partition: str | None = Field(
        None,
        pattern=r"^mig-[0-9]+g\.[0-9]+gb$",
        description=(
            "ComputeResourceRequirements.AcceleratorPartitionType of every copy, a GPU partition (MIG profile) "
            "such as mig-1g.10gb on ml.p5: the variant's AcceleratorPartitionLayouts carves partitions_per_gpu "
            "of it on every GPU and each copy takes one (NumberOfAcceleratorDevicesRequired 1). The types "
            "differ by instance family (workflows/data/gpu_partitions.yaml); g4dn, g5, g6 and g6e have none."
        ),
    )
    partitions_per_gpu: int | None = Field(
        None,
        ge=1,
        le=7,
        description="How many gpu_partition partitions the layout carves on each GPU; empty: as many as fit one.",
    )
    min_instance_count: int = Field(1, ge=1, le=10, description="ManagedInstanceScaling.MinInstanceCount.")
    max_instance_count: int = Field(1, ge=1, le=10, description="ManagedInstanceScaling.MaxInstanceCount.")
    models: list[ComponentModel] = Field(
        default_factory=list,
        description="More components on the same endpoint, next to the run's own ('main').",
    )

    @field_validator("models")
    @classmethod
    def _models(cls, value: list[ComponentModel]) -> list[ComponentModel]:
        _unique_names(value)
        return value

    @model_validator(mode="after")
    def _instances(self) -> Any:
        if self.max_instance_count < max(self.min_instance_count, self.instance_count):
            raise ValueError(
                "max_instance_count must be at least min_instance_count and instance_count "
                f"(got {self.max_instance_count})"
            )
        return self

    @model_validator(mode="after")
    def _partitions(self) -> Any:
        if self.partitions_per_gpu is not None and self.gpu_partition is None:
            raise ValueError(
                "partitions_per_gpu needs gpu_partition: set the partition type, or drop the count"
            )
        if self.gpu_partition is not None and self.accelerator_devices not in (None, 1):
            raise ValueError(
                f"accelerator_devices {self.accelerator_devices} with gpu_partition {self.gpu_partition}: a copy on "
                "a partition takes exactly one (NumberOfAcceleratorDevicesRequired 1); drop accelerator_devices"
            )
        return self


class ScaleToZeroHosting(InferenceComponentHosting):
    mode: Literal["scale-to-zero"] = Field(  # type: ignore[assignment]
        "scale-to-zero",
        description=(
            "Inference components whose copies and instances go to zero when idle: MinInstanceCount 0, "
            "DesiredCopyCount registered with Application Auto Scaling (MinCapacity 0), a target-tracking "
            "policy, and a step-scaling policy fired by a NoCapacityInvocationFailures alarm (F11, F12)."
        ),
    )
    min_instance_count: int = Field(  # type: ignore[assignment]
        0, ge=0, le=0, description="ManagedInstanceScaling.MinInstanceCount: 0 (scale to zero)."
    )
    max_copies: int = Field(1, ge=1, le=100, description="MaxCapacity of each component's DesiredCopyCount.")
    target_concurrent_requests: float = Field(
        4.0,
        gt=0,
        le=1000,
        description="Target-tracking value: concurrent requests per copy (high-resolution metric).",
    )
    scale_in_cooldown_s: int = Field(
        300, ge=0, le=3600, description="Target tracking ScaleInCooldown, seconds."
    )
    scale_out_cooldown_s: int = Field(
        60, ge=0, le=3600, description="Scale-out cooldown of both policies, seconds."
    )


class TritonHosting(_Instances):
    mode: Literal["triton"] = Field(
        "triton",
        description="NVIDIA Triton (SageMaker image) serving the ONNX artifact as a model repository.",
    )
    max_batch_size: int = Field(
        32, ge=0, le=1024, description="config.pbtxt max_batch_size (0: no batching)."
    )
    dynamic_batching: bool = Field(True, description="Add dynamic_batching {} to the ONNX model's config.")
    instances_per_device: int = Field(1, ge=1, le=16, description="instance_group count per device.")
    tokenizer_ensemble: bool = Field(
        True,
        description=(
            "Serve text through an ensemble (a python-backend tokenizer, then the ONNX model). The Triton "
            "image has no tokenizers package: pack ships its wheel beside the tokenizer's model.py. "
            "false serves token ids only."
        ),
    )


class LmiHosting(_Instances):
    mode: Literal["lmi"] = Field(
        "lmi",
        description="DJL Serving LMI (djl-inference) with transformers, one container serving every model "
        "(several models on one GPU).",
    )
    dtype: Literal["fp32", "fp16"] = Field(
        "fp32", description="Weights dtype in the container (fp16 on GPU only)."
    )
    models: list[LmiModel] = Field(
        default_factory=list, description="More models in the same container, next to the run's own ('main')."
    )

    @field_validator("models")
    @classmethod
    def _models(cls, value: list[LmiModel]) -> list[LmiModel]:
        _unique_names(value)
        return value


class VllmHosting(_Instances):
    mode: Literal["vllm"] = Field(
        "vllm", description="vLLM's SageMaker image, pooling runner, one model per endpoint (F05)."
    )
    instance_type_fallbacks: list[EndpointInstanceType] = Field(
        default_factory=lambda: ["ml.g5.xlarge"],
        min_length=1,
        max_length=MAX_INSTANCE_TYPES,
        description="The GPU instance type to deploy, e.g. ml.g5.xlarge, then its capacity fallbacks in order.",
    )
    model_id: Word | None = Field(
        None,
        description=(
            "SM_VLLM_MODEL: a Hugging Face Hub id; empty serves the run's model.source (an s3:// prefix, "
            "mounted at /opt/ml/model; 'bundled' is sentence-transformers/all-MiniLM-L6-v2)."
        ),
    )
    max_model_len: int = Field(512, ge=8, le=32768, description="SM_VLLM_MAX_MODEL_LEN (the field used 512).")
    pair_separator: str | None = Field(
        None,
        min_length=1,
        max_length=32,
        description="Joins a text pair for /classify (vLLM has no pairs, F27); empty picks the family's "
        "('</s></s>' XLM-RoBERTa/RoBERTa, '[SEP]' BERT).",
    )

    @model_validator(mode="before")
    @classmethod
    def _standalone(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("models"):
            raise ValueError(
                "vLLM runs as a standalone endpoint only: its SageMaker image has neither the "
                "accept-bind-to-port nor the multi-models label (F05); co-host with mode 'lmi' instead"
            )
        return data


Hosting = Annotated[
    RealtimeHosting
    | MultiContainerHosting
    | ServerlessHosting
    | InferenceComponentHosting
    | ScaleToZeroHosting
    | TritonHosting
    | LmiHosting
    | VllmHosting,
    Field(discriminator="mode"),
]


def mode_names() -> tuple[str, ...]:
    """Every ``hosting.mode``, in the union's order (``realtime`` first)."""
    members = get_args(get_args(Hosting)[0])
    return tuple(str(member.model_fields["mode"].default) for member in members)
