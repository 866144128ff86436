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

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar, overload

from pydantic import BaseModel

from workflows import clock, naming
from workflows.contracts import (
    ComponentStatus,
    DeployRequest,
    DeployResult,
    DescribeRequest,
    PreflightResult,
)
from workflows.errors import PreflightBlocked, SpecInvalid
from workflows.gpu.device import artifact_device
from workflows.hosting import pools
from workflows.hosting.create_calls import create_endpoint, create_model, instance_variant, run_tags
from workflows.hosting.pool_devices import OVERRIDE_MODES, model_overrides
from workflows.hosting.spec_bases import InstanceSettings
from workflows.images.accelerators import device_of
from workflows.images.table import HF_INFERENCE
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
    from types_boto3_sagemaker_runtime import SageMakerRuntimeClient

SpecT = TypeVar("SpecT", bound=BaseModel)
InstancesT = TypeVar("InstancesT", bound=InstanceSettings)


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


def with_download_timeout(hosting: SpecT, artifact_bytes: int) -> SpecT:
    """The hosting with ``model_data_download_timeout_s`` derived from the packed artifact's size when
    the spec left it empty (modes without the field are returned as they are)."""
    if "model_data_download_timeout_s" not in type(hosting).model_fields:
        return hosting
    if getattr(hosting, "model_data_download_timeout_s", None) is not None:
        return hosting
    derived = download_timeout_for(artifact_bytes / MB)
    return hosting.model_copy(update={"model_data_download_timeout_s": derived})


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
        types = pools.pool_types(hosting, request.attempt.instance_type_index, supported=self.supports_pools)
        # One type left, on a device the run has its own artifact for: that artifact is the attempt's.
        alone = None if types else self.device_request(request, device_of(instance_type))
        if alone is not None:
            request, hosting = alone, self.hosting_for(alone)
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
        extra = self.device_models(request, types, first=len(models), clients=clients, settings=settings)
        models += list(extra.values())
        variant = self.variant(planned.hosting, instance_type=instance_type, models=models)
        if types:
            overrides = model_overrides(types, artifact_device(request.spec.hosting), extra)
            variant = pools.pooled_for(request.spec, planned.hosting, variant, types, overrides)
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
            device_models={artifact_device(request.spec.hosting): models[0], **extra} if extra else {},
            created_at=clock.now(),
            mode=self.mode,
            effective_hosting=planned.hosting.model_dump(mode="json"),
            **planned.recorded,
        )

    def device_models(
        self,
        request: DeployRequest,
        types: Sequence[str],
        *,
        first: int,
        clients: AwsClients,
        settings: Settings,
    ) -> dict[str, str]:
        """One Model per further device that ``types`` run on (pools across devices, a mode whose pools
        take ``ModelNameOverride``): the device's packed artifact, planned as the run's own on the
        device's first type, named from model index ``first`` on. Returns the model name per device
        (none without such artifacts)."""
        made: dict[str, str] = {}
        for device in dict.fromkeys(device_of(name) for name in types):
            device_request = self.device_request(request, device)
            if device_request is None:
                continue
            hosting = self.hosting_for(device_request)
            name = next(name for name in types if device_of(name) == device)
            planned = self.plan(device_request, hosting, name, clients=clients, settings=settings)
            made[device] = create_model(
                clients.sagemaker,
                naming.model_name(request.run_id, request.attempt.number, first + len(made)),
                settings=settings,
                tags=run_tags(request),
                hosting=planned.hosting,
                **planned.models[0],
            )
        return made

    def device_request(self, request: DeployRequest, device: str) -> DeployRequest | None:
        """``request`` deploying the run's further artifact for ``device`` (pools across devices, a mode
        whose pools take ``ModelNameOverride``); None when the run has no such artifact."""
        artifact = request.pack.for_device(device) if self.mode in OVERRIDE_MODES else None
        if artifact is None:
            return None
        pack = request.pack.model_copy(
            update={
                "model_data_uri": artifact.model_data_uri,
                "size_bytes": artifact.size_bytes,
                "sha256": artifact.sha256,
                "device_artifacts": [],
            }
        )
        return request.model_copy(update={"pack": pack})

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
