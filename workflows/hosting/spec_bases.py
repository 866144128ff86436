"""Settings several hosting modes share, and the limits that bound a ``hosting`` section.

The instance-backed base (instance types with their fallbacks, count, image, AMI, download timeout, capacity
reservation, VPC) and the HF inference DLC's model server settings, which the members of
``workflows.hosting.specs`` combine; the limits are botocore's and SageMaker's, kept here once for the spec
and for the code that checks or sends them.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from workflows.hosting.network import Secured
from workflows.hosting.regions import RegionSettings
from workflows.hosting.renames import accept_former_instance_types
from workflows.hosting.tracing import Traced
from workflows.models import Strict
from workflows.spec.enums import EndpointInstanceType, InferenceAmiVersion, Word

# Families may carry a dash: ml.p6-b200.48xlarge, ml.p6e-gb200.36xlarge.
INSTANCE_TYPE = re.compile(r"^ml\.[a-z0-9]+(-[a-z0-9]+)?\.[a-z0-9]+$")
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


class _Instances(Secured, RegionSettings, Traced):
    """What every instance-backed mode has: instance types with fallbacks, count, image, AMI, VPC, keys,
    request tracing."""

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
            f"types (at most {MAX_INSTANCE_POOLS}) become the endpoint config's "
            "InstancePools in that order and SageMaker falls back by itself within one endpoint, where the "
            "mode supports pools (realtime, inference-component, triton, lmi, vllm); deploybench recreates on "
            "the next type only once the pools are exhausted. 'recreate': one type per endpoint, deploybench "
            "tears the stalled endpoint down and recreates it on the next type (also what modes without "
            "pools do). CPU and GPU types in one pool list: the realtime mode converts one artifact per device "
            "(fp16 for the GPU, fp32 or int8 for the CPU) and serves each device's pools with its own model "
            "(ModelNameOverride); other modes need one device or 'recreate'."
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


InstanceSettings = _Instances
"""What every mode on instances has in its spec (all but serverless), for code those modes share."""
ModelServerSettings = _ModelServer
"""The HF inference DLC's model server settings, for code the modes on that image share."""
