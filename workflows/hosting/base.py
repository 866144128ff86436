"""What every hosting mode is: a strategy object that creates, advances and names its resources.

The deploy step calls ``deploy`` (creates what can be created at once and returns while the
endpoint is Creating); the wait loop calls ``advance`` on every poll once the endpoint is InService
(a mode whose resources need an InService endpoint, such as inference components, creates them
there, idempotently, and reports when everything serves). Teardown needs no mode: every resource
is named from the run id and found by that prefix (``workflows/hosting/resources.py``).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast, overload

from workflows import clock, naming
from workflows.accelerators import device_of
from workflows.aws import aws_errors
from workflows.contracts import (
    ComponentStatus,
    DeployRequest,
    DeployResult,
    DescribeRequest,
    Finding,
)
from workflows.errors import PreflightBlocked, SpecInvalid
from workflows.images import HF_INFERENCE, image_uri
from workflows.settings import Settings

if TYPE_CHECKING:
    from types_boto3_application_autoscaling import ApplicationAutoScalingClient
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_s3 import S3Client
    from types_boto3_sagemaker import SageMakerClient
    from types_boto3_sagemaker.type_defs import ProductionVariantTypeDef, TagTypeDef
    from types_boto3_sagemaker_runtime import SageMakerRuntimeClient

VARIANT = "primary"


# Override field -> the hosting field it replaces, in every mode that has that field.
@dataclass(frozen=True)
class AwsClients:
    """The AWS clients a mode may call; the step passes the ones its handler built."""

    sagemaker: SageMakerClient
    s3: S3Client | None = None
    autoscaling: ApplicationAutoScalingClient | None = None
    cloudwatch: CloudWatchClient | None = None
    runtime: SageMakerRuntimeClient | None = None

    @overload
    def need(self, name: Literal["s3"]) -> S3Client: ...
    @overload
    def need(self, name: Literal["autoscaling"]) -> ApplicationAutoScalingClient: ...
    @overload
    def need(self, name: Literal["cloudwatch"]) -> CloudWatchClient: ...
    @overload
    def need(self, name: Literal["runtime"]) -> SageMakerRuntimeClient: ...
    def need(self, name: str) -> Any:
        """The client ``name``, or a clear error when the step did not pass it."""
        client = getattr(self, name)
        if client is None:
            raise ValueError(f"this hosting mode needs the {name} client; pass it to the step")
        return client


@dataclass(frozen=True)
class Progress:
    """What ``advance`` found: ready to serve, or still placing components (and why)."""

    ready: bool
    phase: str = "ready"
    components: list[ComponentStatus] = field(default_factory=list)


def effective_hosting(request: DescribeRequest) -> Any:
    """The hosting settings the deploy used (recorded in its result, overrides applied); the spec's
    when the result recorded none."""
    recorded = request.deploy.effective_hosting
    hosting = request.spec.hosting
    return type(hosting).model_validate(recorded) if recorded else hosting


def model_server_environment(hosting: Any) -> dict[str, str]:
    """Environment of the HF inference DLC's model server (Multi Model Server).

    Without SAGEMAKER_MODEL_SERVER_WORKERS the server starts one worker per vCPU, each with its own
    ONNX session: 1137 MB x 8 workers x 2 containers exhausted 16 GB in the field (F02).
    MMS 1.1.11 reads ``default_response_timeout`` in minutes (ConfigManager multiplies it by 60) and
    ``default_response_timeout_seconds`` as given; the inference toolkit (sagemaker-inference 1.10)
    fills them from SAGEMAKER_MODEL_SERVER_TIMEOUT and SAGEMAKER_MODEL_SERVER_TIMEOUT_SECONDS. The
    seconds variant wins where the toolkit knows it; the minutes one, rounded up, keeps older
    toolkits from reading 120 s as two hours. The same timeout bounds how long a worker may take to
    load the model.
    """
    seconds = int(hosting.model_server_timeout_s)
    return {
        "SAGEMAKER_MODEL_SERVER_WORKERS": str(hosting.workers),
        "ORT_INTRA_OP_THREADS": str(hosting.ort_intra_op_threads),
        "SAGEMAKER_MODEL_SERVER_TIMEOUT_SECONDS": str(seconds),
        "SAGEMAKER_MODEL_SERVER_TIMEOUT": str(max(1, math.ceil(seconds / 60))),
    }


def instance_type_for(request: DeployRequest) -> str:
    """The attempt's instance type (F06/F07 fallbacks move the index).

    Raises:
        SpecInvalid: the index is past the listed instance types.
    """
    types = request.spec.hosting.instance_type_fallbacks  # type: ignore[union-attr]
    index = request.attempt.instance_type_index
    if index >= len(types):
        raise SpecInvalid(
            f"attempt {request.attempt.number} asks for instance type #{index + 1} but hosting.instance_type_fallbacks "
            f"lists {len(types)}.",
            fix="list more fallback instance types",
        )
    return str(types[index])


def run_tags(request: DeployRequest) -> list[TagTypeDef]:
    return naming.tags(request.run_id, request.spec)


def image_for(family: str, hosting: Any, instance_type: str | None, region: str) -> str:
    """The spec's image, else ``family``'s build (``hosting.image_version`` or the default) from
    ``images.yaml`` for the instance's device (CPU when there is no instance: serverless).

    Raises:
        SpecInvalid: the instance's accelerators are not CUDA GPUs (Neuron, Gaudi), the build is
            unknown, it has no image for the device, or it is not published in ``region``.
    """
    explicit = getattr(hosting, "image", None)
    if explicit:
        return str(explicit)
    device = device_of(instance_type) if instance_type else "cpu"
    if device not in ("cpu", "gpu"):
        raise SpecInvalid(
            f"{instance_type} carries {device} accelerators, not CUDA GPUs: no {family} image in "
            "workflows/data/images.yaml runs there.",
            fix="use a GPU or CPU instance type, or set hosting.image to an image built for this accelerator",
        )
    version = getattr(hosting, "image_version", None)
    return image_uri(family, gpu=device == "gpu", region=region, version=version)


def instance_variant(hosting: Any, *, instance_type: str, model: str | None) -> dict[str, Any]:
    """A ProductionVariant on instances: the model (none for inference components), the health check
    timeout (it must cover downloading and loading the model, F07), the AMI when asked (F20)."""
    variant: dict[str, Any] = {
        "VariantName": VARIANT,
        "InstanceType": instance_type,
        "InitialInstanceCount": hosting.instance_count,
        "ContainerStartupHealthCheckTimeoutInSeconds": hosting.startup_health_check_timeout_s,
    }
    if model is not None:
        variant["ModelName"] = model
    if hosting.inference_ami_version:
        variant["InferenceAmiVersion"] = hosting.inference_ami_version
    return variant


def create_model(
    sagemaker: SageMakerClient, name: str, *, settings: Settings, tags: list[TagTypeDef], **spec: Any
) -> str:
    with aws_errors(f"create model {name}"):
        sagemaker.create_model(
            ModelName=name, ExecutionRoleArn=settings.sagemaker_role_arn, Tags=tags, **spec
        )
    return name


def create_endpoint(
    sagemaker: SageMakerClient,
    *,
    config: str,
    endpoint: str,
    variants: list[dict[str, Any]],
    tags: list[TagTypeDef],
    **extra: Any,
) -> None:
    """The endpoint config, then the endpoint (returns while it is Creating)."""
    with aws_errors(f"create endpoint config {config}"):
        sagemaker.create_endpoint_config(
            EndpointConfigName=config,
            # Each mode builds its variants as plain dicts from its own spec; the keys are SageMaker's.
            ProductionVariants=cast("list[ProductionVariantTypeDef]", variants),
            Tags=tags,
            **extra,
        )
    with aws_errors(f"create endpoint {endpoint}"):
        sagemaker.create_endpoint(EndpointName=endpoint, EndpointConfigName=config, Tags=tags)


class HostingMode(ABC):
    """One way to host the model: its resources, how to create and advance them, how to invoke it."""

    mode: ClassVar[str]
    local_blocker: ClassVar[str | None] = None
    """Why the local engine cannot serve this mode (None: it can)."""
    uses_components: ClassVar[bool] = False
    uses_scaling: ClassVar[bool] = False
    image_family: ClassVar[str] = HF_INFERENCE
    """The ``images.yaml`` family the mode deploys unless ``hosting.image`` is set."""
    image_devices: ClassVar[tuple[str, ...]] = ("cpu", "gpu")
    """The devices the mode deploys that family on (its checks refuse the others)."""

    @abstractmethod
    def deploy(self, request: DeployRequest, *, clients: AwsClients, settings: Settings) -> DeployResult:
        """Create the mode's resources; returns as soon as the endpoint is Creating.

        Static problems (F04, F05, F08, F25 ...) are refused before the first AWS call.
        """

    def open_endpoint(
        self,
        request: DeployRequest,
        clients: AwsClients,
        *,
        hosting: Any,
        model: str,
        instance_type: str,
        variants: list[dict[str, Any]],
        tags: list[TagTypeDef],
        **recorded: Any,
    ) -> DeployResult:
        """Create the attempt's endpoint config and endpoint over ``model``; the deploy's result.

        Args:
            hosting: the settings this attempt deployed (overrides applied), recorded in the result.
            recorded: further ``DeployResult`` fields of the mode (targets, staging URIs).
        """
        config = naming.endpoint_config_name(request.run_id, request.attempt.number)
        endpoint = naming.endpoint_name(request.run_id, request.attempt.number)
        create_endpoint(clients.sagemaker, config=config, endpoint=endpoint, variants=variants, tags=tags)
        return DeployResult(
            endpoint_name=endpoint,
            endpoint_config_name=config,
            model_names=[model],
            instance_type=instance_type,
            created_at=clock.now(),
            mode=self.mode,
            effective_hosting=hosting.model_dump(mode="json"),
            **recorded,
        )

    def advance(self, request: DescribeRequest, *, clients: AwsClients) -> Progress:
        """Called on each poll once the endpoint is InService: ready, or what is still being placed."""
        return Progress(ready=True)


def refuse_blocking(findings: list[Finding], *, mode: str) -> None:
    """Stop before the first AWS call when a static check blocks (the preflight ran the same checks;
    this guards a deploy reached another way, such as a remediation's new instance type).

    Raises:
        PreflightBlocked: listing every blocking finding with its fix.
    """
    blocking = [f for f in findings if f.severity == "blocking"]
    if blocking:
        raise PreflightBlocked(
            f"{mode} deploy refused before any AWS call:\n"
            + "\n".join(f"{f.id} (blocking): {f.message} Fix: {f.fix}" for f in blocking)
        )
