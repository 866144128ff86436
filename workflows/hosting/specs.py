"""The ``hosting`` section of a run spec: one member per hosting mode, discriminated by ``mode``.

Kept apart from ``workflows.spec.pipeline`` (which imports it) so that each mode's settings sit next to each
other; every member is frozen and refuses unknown fields, and every field says what it accepts.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, get_args

from pydantic import Field, field_validator, model_validator

from workflows.hosting.network import Secured
from workflows.hosting.renames import accept_former_instance_types
from workflows.models import Strict
from workflows.spec.enums import EndpointInstanceType, InferenceAmiVersion, Word

# Families may carry a dash: ml.p6-b200.48xlarge, ml.p6e-gb200.36xlarge.
INSTANCE_TYPE = re.compile(r"^ml\.[a-z0-9]+(-[a-z0-9]+)?\.[a-z0-9]+$")
# Container hostnames and component name suffixes: short, lowercase, SageMaker-name safe.
_MODEL_NAME = re.compile(r"^[a-z0-9](-?[a-z0-9]){0,15}$")
SERVERLESS_MEMORY_MB = (1024, 2048, 3072, 4096, 5120, 6144)
# A multi-container endpoint takes at most 15 containers (CreateModel's Containers limit).
MAX_CONTAINERS = 15
# Fallbacks are tried one by one after a capacity stall; remediation.next_instance_type allows 10.
MAX_INSTANCE_TYPES = 11
# CreateEndpointConfig's InstancePoolList takes 1-5 pools (botocore: InstancePoolList max 5).
MAX_INSTANCE_POOLS = 5
# botocore's MlReservationArn pattern: a resource type of at most 14 characters (training-plan/NAME).
ML_RESERVATION_ARN = re.compile(r"^arn:aws[a-z\-]*:sagemaker:[a-z0-9\-]*:[0-9]{12}:[a-z0-9\-]{1,14}/.*$")
# botocore's ProductionVariantModelDataDownloadTimeoutInSeconds and ServerlessProvisionedConcurrency.
DOWNLOAD_TIMEOUT_RANGE_S = (60, 3600)
MAX_PROVISIONED_CONCURRENCY = 200
_IMAGE_VERSION = (
    "Build of the mode's image in workflows/data/images.yaml (deploybench images lists them), e.g. "
    "4.51.3 for the HF inference DLC with transformers 4.51.3; empty: the table's default (HF: "
    "transformers 5.5.3 on PyTorch 2.6.0). hosting.image, when set, wins."
)
MAIN_MODEL = "main"
"""Name of the run's own model among co-hosted ones (its container hostname, its component suffix)."""


def _model_name(value: str) -> str:
    if not _MODEL_NAME.match(value) or value == MAIN_MODEL:
        raise ValueError(
            f"'{value}' cannot name a co-hosted model: use 1-16 lowercase letters, digits and single dashes, "
            f"not '{MAIN_MODEL}' (the run's own model)"
        )
    return value


class _Instances(Secured):
    """What every instance-backed mode has: instance types with fallbacks, count, image, AMI, VPC, keys."""

    instance_type_fallbacks: list[EndpointInstanceType] = Field(
        default_factory=lambda: ["ml.c6i.xlarge"],
        min_length=1,
        max_length=MAX_INSTANCE_TYPES,
        description=(
            "The instance type to deploy, then its fallbacks in order, e.g. [ml.c6i.xlarge, ml.c6i.2xlarge]. "
            "Only the first is deployed and measured; the next is tried only when the one before has no "
            "capacity (F06) or too little memory (F07). To measure several types, sweep them "
            "(matrix.instance_types). Formerly instance_types."
        ),
    )
    capacity: Literal["pools", "recreate"] = Field(
        "pools",
        description=(
            "How a capacity stall (F06) moves to the next type of instance_type_fallbacks. 'pools': the "
            f"types (up to {MAX_INSTANCE_POOLS} from the attempt's) become the endpoint config's "
            "InstancePools in that order and SageMaker falls back by itself within one endpoint, where the "
            "mode supports pools (realtime, inference-component, triton, lmi, vllm); deploybench recreates on "
            "the next type only once the pools are exhausted. 'recreate': one type per endpoint, deploybench "
            "tears the stalled endpoint down and recreates it on the next type (also what modes without "
            "pools do). CPU and GPU types in one pool list need one artifact per device: use 'recreate' there."
        ),
    )
    instance_count: int = Field(1, ge=1, le=10, description="Instances behind the endpoint.")
    image: Word | None = Field(
        None,
        description="Container image URI; empty picks the mode's image for the instance type from "
        "workflows/data/images.yaml.",
    )
    image_version: str | None = Field(None, description=_IMAGE_VERSION)
    startup_health_check_timeout_s: int = Field(
        600, ge=60, le=3600, description="ContainerStartupHealthCheckTimeoutInSeconds (60-3600)."
    )
    model_data_download_timeout_s: int | None = Field(
        None,
        ge=DOWNLOAD_TIMEOUT_RANGE_S[0],
        le=DOWNLOAD_TIMEOUT_RANGE_S[1],
        description=(
            "ModelDataDownloadTimeoutInSeconds (60-3600): how long SageMaker may take to download and "
            "extract the artifact onto each instance. Empty: derived from the packed artifact's size at "
            "deploy (three times its download at 50 MB/s, at least 600 s); preflight warns when an artifact "
            "would need more than 3600 s."
        ),
    )
    capacity_reservation: str | None = Field(
        None,
        description=(
            "ARN of the SageMaker training plan that holds an ML capacity reservation for endpoints, to "
            "launch the endpoint's instances into: sent as CapacityReservationConfig with the only "
            "preference botocore offers, capacity-reservations-only (no capacity left there: the launch "
            "fails, F06). Preflight reads the plan (DescribeTrainingPlan) and checks its instance type, "
            "free instances, state and that it may serve endpoints. Needs exactly one instance type."
        ),
    )
    inference_ami_version: InferenceAmiVersion | None = Field(
        None,
        description="ProductionVariant InferenceAmiVersion (botocore's ProductionVariantInferenceAmiVersion), "
        "e.g. al2023-ami-sagemaker-inference-gpu-4-1.",
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed_instance_types(cls, data: Any) -> Any:
        return accept_former_instance_types(data)

    @field_validator("instance_type_fallbacks")
    @classmethod
    def _instance_types(cls, value: list[str]) -> list[str]:
        repeated = sorted({n for n in value if value.count(n) > 1})
        if repeated:
            raise ValueError(f"instance types repeat ({', '.join(repeated)}); list each fallback once")
        return value

    @field_validator("capacity_reservation")
    @classmethod
    def _reservation(cls, value: str | None) -> str | None:
        if value is not None and not (20 <= len(value) <= 258 and ML_RESERVATION_ARN.match(value)):
            raise ValueError(
                f"'{value}' is not an ML reservation ARN (botocore's MlReservationArn: "
                "arn:aws:sagemaker:REGION:ACCOUNT:training-plan/NAME, 20-258 characters)"
            )
        return value

    @model_validator(mode="after")
    def _reserved_type(self) -> Any:
        if self.capacity_reservation and len(self.instance_type_fallbacks) > 1:
            raise ValueError(
                "a capacity reservation holds one instance type, and capacity-reservations-only launches "
                f"nothing outside it: list only the reserved type in instance_type_fallbacks (got "
                f"{', '.join(self.instance_type_fallbacks)})"
            )
        return self


class _ModelServer(Strict):
    """The HF inference DLC's model server (Multi Model Server) settings."""

    workers: int = Field(
        1,
        ge=1,
        le=64,
        description=(
            "SAGEMAKER_MODEL_SERVER_WORKERS. Each worker loads its own ONNX session (F02): keep 1 and "
            "use intra-op threads."
        ),
    )
    ort_intra_op_threads: int = Field(
        0, ge=0, le=192, description="ORT_INTRA_OP_THREADS in the container (0 = all cores)."
    )
    model_server_timeout_s: int = Field(
        120,
        ge=10,
        le=3600,
        description=(
            "How long the model server waits for a worker (loading the model included), seconds: sent as "
            "SAGEMAKER_MODEL_SERVER_TIMEOUT_SECONDS and, rounded up, as SAGEMAKER_MODEL_SERVER_TIMEOUT "
            "(which MMS reads in minutes)."
        ),
    )


class RealtimeHosting(_Instances, _ModelServer):
    mode: Literal["realtime"] = Field("realtime", description="Real-time endpoint on the HF inference DLC.")


class CoHostedModel(Strict):
    """Another model on the same endpoint: a container (multi-container) or a component."""

    name: str = Field(
        ..., description="1-16 lowercase letters, digits, dashes: its hostname or component suffix."
    )
    model_data_uri: str | None = Field(
        None,
        description=(
            "s3:// URI of a model.tar.gz packed for the HF inference DLC (code/inference.py); empty serves "
            "another copy of the run's own artifact."
        ),
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _model_name(value)

    @field_validator("model_data_uri")
    @classmethod
    def _uri(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("s3://"):
            raise ValueError(f"'{value}' is not an s3:// URI of a model.tar.gz")
        return value


def _unique_names(models: list[Any]) -> None:
    names = [m.name for m in models]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"co-hosted model names repeat: {repeated}; give each its own name")


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


class ComponentModel(CoHostedModel):
    copies: int | None = Field(
        None, ge=1, le=100, description="Copies of this component; empty: hosting.copies."
    )


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


class LmiModel(Strict):
    """Another Hugging Face model in the same LMI container (GPU co-hosting)."""

    name: str = Field(..., description="1-16 lowercase letters, digits, dashes: how requests name it.")
    source: Word = Field(
        ...,
        description="s3:// prefix of a Hugging Face model folder, or a Hugging Face Hub model id.",
    )
    task: Literal["embedding", "classification"] = Field(
        "embedding", description="'embedding' or 'classification'."
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _model_name(value)


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
