"""What every hosting mode is: a strategy object, generic over its own hosting spec, that checks,
creates and advances its resources.

A mode owns its spec type (``spec_type``: the narrowing from the spec's union happens once, in
``spec_of``), its preflight checks (``checks``, run by ``preflight``) and the resources it creates.
The deploy step calls ``deploy``, one template for every mode: the mode's ``plan`` refuses what its
static checks block and stages what it serves, then each of its models is created, then the
endpoint config with the mode's ``variant`` and the endpoint; it returns while the endpoint is
Creating. The wait loop calls ``advance`` on every poll once the endpoint is InService (a mode whose
resources need an InService endpoint, such as inference components, creates them there,
idempotently, and reports when everything serves). Teardown needs no mode: every resource is named
from the run id and found by that prefix (``workflows/hosting/resources.py``).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Protocol, TypeVar, cast, overload

from pydantic import BaseModel

from workflows import clock, naming
from workflows.aws.clients import aws_errors
from workflows.contracts import (
    ComponentStatus,
    DeployRequest,
    DeployResult,
    DescribeRequest,
    PreflightResult,
)
from workflows.errors import PreflightBlocked, SpecInvalid
from workflows.hosting import pools
from workflows.hosting.network import endpoint_config_security, model_security
from workflows.hosting.spec_bases import _Instances, _ModelServer
from workflows.images.accelerators import device_of, is_arm64
from workflows.images.table import HF_INFERENCE, image_uri
from workflows.preflight.context import MB, PreflightContext
from workflows.preflight.memory import download_timeout_for
from workflows.preflight.registry import Check, Scope, run_declared
from workflows.remediation.overrides import with_overrides
from workflows.settings import Settings
from workflows.spec.pipeline import RunSpec

if TYPE_CHECKING:
    from types_boto3_application_autoscaling import ApplicationAutoScalingClient
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_s3 import S3Client
    from types_boto3_sagemaker import SageMakerClient
    from types_boto3_sagemaker.type_defs import ProductionVariantTypeDef, TagTypeDef
    from types_boto3_sagemaker_runtime import SageMakerRuntimeClient

VARIANT = "primary"

InstanceSettings = _Instances
"""What every mode on instances has in its spec (all but serverless), for code those modes share."""
ModelServerSettings = _ModelServer
"""The HF inference DLC's model server settings, for code the modes on that image share."""

SpecT = TypeVar("SpecT", bound=BaseModel)
InstancesT = TypeVar("InstancesT", bound=InstanceSettings)


class ImageChoice(Protocol):
    """What picks a mode's image: every hosting spec has both fields."""

    @property
    def image(self) -> str | None: ...

    @property
    def image_version(self) -> str | None: ...


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


@dataclass(frozen=True)
class Planned(Generic[SpecT]):
    """What one deploy attempt creates, as a mode's ``plan`` decided it."""

    hosting: SpecT
    """The settings deployed (overrides applied, choices the mode made recorded), kept in the result."""
    models: list[dict[str, Any]]
    """Each model's CreateModel arguments besides its name, role and tags, in creation order."""
    recorded: dict[str, Any] = field(default_factory=dict)
    """Further ``DeployResult`` fields of the mode (targets, staging URIs, inference components)."""


def model_server_environment(hosting: ModelServerSettings) -> dict[str, str]:
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


def instance_type_for(request: DeployRequest, types: Sequence[str]) -> str:
    """The attempt's instance type among ``types`` (F06/F07 fallbacks move the index).

    Raises:
        SpecInvalid: the index is past the listed instance types.
    """
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


def image_for(family: str, hosting: ImageChoice, instance_type: str | None, region: str) -> str:
    """The spec's image, else ``family``'s build (``hosting.image_version`` or the default) from
    ``images.yaml`` for the instance's device (CPU when there is no instance: serverless).

    Raises:
        SpecInvalid: the instance's accelerators are not CUDA GPUs (Neuron, Gaudi), the build is
            unknown, it has no image for the device, or it is not published in ``region``.
    """
    explicit = hosting.image
    if explicit:
        return str(explicit)
    if instance_type and is_arm64(instance_type):
        raise SpecInvalid(
            f"{instance_type} has an arm64 CPU (AWS Graviton, or Grace): every {family} image in "
            "workflows/data/images.yaml is built for x86_64, so its container would not start (exec format "
            "error), and the artifact's onnxruntime wheel is x86_64 too.",
            fix="use an x86_64 instance type (ml.c7i, ml.m7i, ml.c6i), or set hosting.image to an image "
            "built for linux/arm64",
        )
    device = device_of(instance_type) if instance_type else "cpu"
    if device not in ("cpu", "gpu"):
        raise SpecInvalid(
            f"{instance_type} carries {device} accelerators, not CUDA GPUs: no {family} image in "
            "workflows/data/images.yaml runs there.",
            fix="use a GPU or CPU instance type, or set hosting.image to an image built for this accelerator",
        )
    return image_uri(family, gpu=device == "gpu", region=region, version=hosting.image_version)


CAPACITY_RESERVATIONS_ONLY = "capacity-reservations-only"
"""The one CapacityReservationPreference botocore's model offers."""


def capacity_reservation_config(hosting: InstanceSettings) -> dict[str, Any]:
    """``CapacityReservationConfig`` for the hosting's ML reservation (F06 for reserved capacity); none
    without one."""
    if not hosting.capacity_reservation:
        return {}
    return {
        "CapacityReservationConfig": {
            "CapacityReservationPreference": CAPACITY_RESERVATIONS_ONLY,
            "MlReservationArn": hosting.capacity_reservation,
        }
    }


def with_download_timeout(hosting: SpecT, artifact_bytes: int) -> SpecT:
    """The hosting with ``model_data_download_timeout_s`` derived from the packed artifact's size when
    the spec left it empty (modes without the field are returned as they are)."""
    if "model_data_download_timeout_s" not in type(hosting).model_fields:
        return hosting
    if getattr(hosting, "model_data_download_timeout_s", None) is not None:
        return hosting
    derived = download_timeout_for(artifact_bytes / MB)
    return hosting.model_copy(update={"model_data_download_timeout_s": derived})


def instance_variant(hosting: InstanceSettings, *, instance_type: str, model: str | None) -> dict[str, Any]:
    """A ProductionVariant on instances: the model (none for inference components), the download and
    health check timeouts (they must cover downloading and loading the model, F07), the AMI when asked
    (F20), the capacity reservation when one is named (F06)."""
    variant: dict[str, Any] = {
        "VariantName": VARIANT,
        "InstanceType": instance_type,
        "InitialInstanceCount": hosting.instance_count,
        "ContainerStartupHealthCheckTimeoutInSeconds": hosting.startup_health_check_timeout_s,
    }
    if hosting.model_data_download_timeout_s is not None:
        variant["ModelDataDownloadTimeoutInSeconds"] = hosting.model_data_download_timeout_s
    if model is not None:
        variant["ModelName"] = model
    if hosting.inference_ami_version:
        variant["InferenceAmiVersion"] = hosting.inference_ami_version
    variant.update(capacity_reservation_config(hosting))
    return variant


def create_model(
    sagemaker: SageMakerClient,
    name: str,
    *,
    settings: Settings,
    tags: list[TagTypeDef],
    hosting: Any,
    **spec: Any,
) -> str:
    """CreateModel with the run's role, tags, and the hosting's VPC and network isolation.

    Args:
        hosting: the attempt's hosting settings; its ``vpc`` and ``network_isolation`` (when the mode
            has them) become VpcConfig and EnableNetworkIsolation.
    """
    with aws_errors(f"create model {name}"):
        sagemaker.create_model(
            ModelName=name,
            ExecutionRoleArn=settings.sagemaker_role_arn,
            Tags=tags,
            **model_security(hosting),
            **spec,
        )
    return name


METRIC_PUBLISH_FREQUENCY_S = 10
"""The finest of botocore's MetricPublishFrequencyInSeconds values (10, 30, 60, 120, 180, 240, 300): a
benchmark window of a minute then holds several utilisation points, not one or none."""


def metrics_config(variants: list[dict[str, Any]]) -> dict[str, Any]:
    """``MetricsConfig`` for an endpoint config: enhanced, per-instance utilisation every 10 s.

    AWS documents enhanced metrics for real-time endpoints (instance, container and GPU dimensions);
    a serverless variant has no instance to report on, so its config carries none.
    """
    if any("ServerlessConfig" in variant for variant in variants):
        return {}
    return {
        "MetricsConfig": {
            "EnableEnhancedMetrics": True,
            "MetricPublishFrequencyInSeconds": METRIC_PUBLISH_FREQUENCY_S,
        }
    }


def create_endpoint(
    sagemaker: SageMakerClient,
    *,
    config: str,
    endpoint: str,
    variants: list[dict[str, Any]],
    tags: list[TagTypeDef],
    hosting: Any,
    **extra: Any,
) -> None:
    """The endpoint config (with the hosting's KmsKeyId), then the endpoint (returns while it is Creating).

    An endpoint config with an ExecutionRoleArn hosts inference components on its own instances, so it
    also carries the hosting's VPC and network isolation.
    """
    security = endpoint_config_security(hosting, hosts_components="ExecutionRoleArn" in extra)
    security.update(metrics_config(variants))
    with aws_errors(f"create endpoint config {config}"):
        sagemaker.create_endpoint_config(
            EndpointConfigName=config,
            # Each mode builds its variants as plain dicts from its own spec; the keys are SageMaker's.
            ProductionVariants=cast("list[ProductionVariantTypeDef]", variants),
            Tags=tags,
            **security,
            **extra,
        )
    with aws_errors(f"create endpoint {endpoint}"):
        sagemaker.create_endpoint(EndpointName=endpoint, EndpointConfigName=config, Tags=tags)


class HostingMode(ABC, Generic[SpecT]):
    """One way to host the model: its spec, its checks, how to create and advance its resources."""

    mode: ClassVar[str]
    spec_type: type[SpecT]
    """The ``hosting`` member of the run spec this mode deploys (its ``mode`` is this mode's)."""
    checks: tuple[Check[SpecT], ...] = ()
    """The mode's preflight checks, in the order they run and report."""
    local_blocker: ClassVar[str | None] = None
    """Why the local engine cannot serve this mode (None: it can)."""
    uses_components: ClassVar[bool] = False
    uses_scaling: ClassVar[bool] = False
    image_family: ClassVar[str] = HF_INFERENCE
    """The ``images.yaml`` family the mode deploys unless ``hosting.image`` is set."""
    image_devices: ClassVar[tuple[str, ...]] = ("cpu", "gpu")
    """The devices the mode deploys that family on (its checks refuse the others)."""
    supports_pools: ClassVar[bool] = False
    """The mode's variant may carry InstancePools (``workflows/hosting/pools.py``)."""

    def spec_of(self, spec: RunSpec) -> SpecT:
        """The spec's hosting section as this mode's own spec type.

        Raises:
            SpecInvalid: the spec's hosting is another mode's.
        """
        hosting = spec.hosting
        if hosting.mode != self.mode or not isinstance(hosting, self.spec_type):
            raise SpecInvalid(
                f"hosting.mode is {hosting.mode!r}, which the {self.mode} mode does not deploy.",
                fix=f"deploy it with the {hosting.mode} mode (workflows.hosting.modes.strategy_for)",
            )
        return hosting

    def hosting_for(self, request: DeployRequest) -> SpecT:
        """The settings this attempt deploys: the spec's, with the remediation's overrides applied and
        the download timeout derived from the packed artifact where the spec left it empty."""
        hosting = with_overrides(self.spec_of(request.spec), request.attempt.overrides)
        return with_download_timeout(hosting, request.pack.size_bytes)

    def recorded_hosting(self, request: DescribeRequest) -> SpecT:
        """The settings the deploy used (recorded in its result, overrides applied); the spec's when
        the result recorded none."""
        recorded = request.deploy.effective_hosting
        return self.spec_type.model_validate(recorded) if recorded else self.spec_of(request.spec)

    def preflight(self, context: PreflightContext, scope: Scope = "all") -> PreflightResult:
        """Run the mode's checks in ``scope`` on the context's spec."""
        return run_declared(context, self.spec_of(context.spec), self.checks, scope)

    def deploy(self, request: DeployRequest, *, clients: AwsClients, settings: Settings) -> DeployResult:
        """Create the mode's resources; returns as soon as the endpoint is Creating.

        Static problems (F04, F05, F08, F25 ...) are refused by ``plan`` before the first SageMaker
        call; then each planned model is created, the endpoint config and the endpoint.

        Raises:
            PreflightBlocked: a static check of the mode blocks.
            DeployRejected: SageMaker refused a create call.
        """
        hosting = self.hosting_for(request)
        instance_type = self.instance_type(request, hosting)
        planned = self.plan(request, hosting, instance_type, clients=clients, settings=settings)
        attempt, tags = request.attempt.number, run_tags(request)
        models = [
            create_model(
                clients.sagemaker,
                naming.model_name(request.run_id, attempt, index),
                settings=settings,
                tags=tags,
                hosting=planned.hosting,
                **model,
            )
            for index, model in enumerate(planned.models)
        ]
        config = naming.endpoint_config_name(request.run_id, attempt)
        endpoint = naming.endpoint_name(request.run_id, attempt)
        variant = self.variant(planned.hosting, instance_type=instance_type, models=models)
        types = pools.pool_types(
            planned.hosting, request.attempt.instance_type_index, supported=self.supports_pools
        )
        if types:
            variant = pools.pooled_for(request.spec, planned.hosting, variant, types)
            problems = pools.variant_problems(variant)
            if problems:
                raise PreflightBlocked(
                    f"instance pools {', '.join(types)}: {'; '.join(problems)}.", fix=pools.MIXED_DEVICES_FIX
                )
        create_endpoint(
            clients.sagemaker,
            config=config,
            endpoint=endpoint,
            variants=[variant],
            tags=tags,
            hosting=planned.hosting,
            **self.endpoint_config_extra(settings),
        )
        return DeployResult(
            endpoint_name=endpoint,
            endpoint_config_name=config,
            model_names=models,
            instance_type=instance_type,
            instance_pools=types,
            provision_timeout_s=variant.get("VariantInstanceProvisionTimeoutInSeconds"),
            created_at=clock.now(),
            mode=self.mode,
            effective_hosting=planned.hosting.model_dump(mode="json"),
            **planned.recorded,
        )

    @abstractmethod
    def instance_type(self, request: DeployRequest, hosting: SpecT) -> str:
        """What ``DeployResult.instance_type`` says: the attempt's instance type."""

    @abstractmethod
    def plan(
        self,
        request: DeployRequest,
        hosting: SpecT,
        instance_type: str,
        *,
        clients: AwsClients,
        settings: Settings,
    ) -> Planned[SpecT]:
        """Refuse what the mode's static checks block, stage what the container reads, and say which
        models to create.

        Raises:
            PreflightBlocked: a static check blocks (before any SageMaker call).
        """

    @abstractmethod
    def variant(self, hosting: SpecT, *, instance_type: str, models: list[str]) -> dict[str, Any]:
        """The endpoint config's ProductionVariant over the created ``models``."""

    def endpoint_config_extra(self, settings: Settings) -> dict[str, Any]:
        """Further CreateEndpointConfig arguments of the mode (none by default)."""
        return {}

    def advance(self, request: DescribeRequest, *, clients: AwsClients) -> Progress:
        """Called on each poll once the endpoint is InService: ready, or what is still being placed."""
        return Progress(ready=True)


class InstanceMode(HostingMode[InstancesT]):
    """A mode on instances: the attempt's instance type from the fallbacks, one variant on it (or
    the fallbacks as instance pools, unless the mode says it has none)."""

    supports_pools: ClassVar[bool] = True

    def instance_type(self, request: DeployRequest, hosting: InstancesT) -> str:
        return instance_type_for(request, hosting.instance_type_fallbacks)

    def variant(self, hosting: InstancesT, *, instance_type: str, models: list[str]) -> dict[str, Any]:
        return instance_variant(hosting, instance_type=instance_type, model=models[0])
