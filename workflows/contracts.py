"""Typed inputs and outputs of every pipeline step.

The execution state of the deploy pipeline is one ``PipelineState``: the input carries every
key (``None`` until a step fills it), and each Task writes its result at its ``ResultPath``.
A step that needs only part of the state gets a narrow request built by the state's
``Parameters``; Diagnose, Teardown and Report read the whole state.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import Field

from workflows.artifact.manifest import ArtifactManifest as ArtifactManifest
from workflows.artifact.manifest import FileEntry as FileEntry
from workflows.artifact.manifest import ParityReport as ParityReport
from workflows.artifact.manifest import QuantizationReport as QuantizationReport
from workflows.benchmark.results import BenchmarkResult, WarmupResult
from workflows.hosting.router_state import RouterResult
from workflows.models import Contract as Contract
from workflows.remediation.records import RemediationPlan, RemediationRecord
from workflows.spec.pipeline import RunSpec

# --- steps ---------------------------------------------------------------------------------


class StepRequest(Contract):
    run_id: str
    spec: RunSpec


class ConversionCacheOutcome(Contract):
    status: Literal["hit", "miss", "off"] = "off"
    key: str | None = Field(None, description="sha256 of the model files, settings and converter version.")
    location: str | None = Field(None, description="The cache entry: a local folder or an s3:// prefix.")


class ConvertedDevice(Contract):
    """The run's artifact for a second device (instance pools across CPU and GPU types)."""

    device: Literal["cpu", "gpu"]
    staging_uri: str = Field(description="s3:// prefix holding this device's converted folder.")
    manifest: ArtifactManifest
    cache: ConversionCacheOutcome = Field(default_factory=ConversionCacheOutcome)


class ConvertResult(Contract):
    staging_uri: str = Field(description="s3:// prefix holding the converted folder.")
    manifest: ArtifactManifest
    seconds: float
    cache: ConversionCacheOutcome = Field(default_factory=ConversionCacheOutcome)
    device_artifacts: list[ConvertedDevice] = Field(
        default_factory=list,
        description="Pools across devices: one artifact per further device, each served by its own Model "
        "(ModelNameOverride); empty: the run has one artifact.",
    )


class PackRequest(StepRequest):
    convert: ConvertResult
    # Defined further down; pydantic resolves the name when the model is first used.
    attempt: DeployAttempt = Field(
        default_factory=lambda: DeployAttempt(),
        description="Its overrides.extra_requirements go into the artifact (F01/F17 remediation).",
    )


class PackedDevice(Contract):
    """A second device's packed artifact: its own Model serves the pools of that device."""

    device: Literal["cpu", "gpu"]
    model_data_uri: str
    size_bytes: int
    sha256: str
    onnx_file: str = Field(description="The graph the artifact serves, e.g. model.fp16.onnx.")
    precision: str


class PackResult(Contract):
    model_data_uri: str
    size_bytes: int
    sha256: str
    compression: str
    seconds: float
    device_artifacts: list[PackedDevice] = Field(
        default_factory=list,
        description="Pools across devices: the further devices' artifacts (the primary is model_data_uri).",
    )

    def for_device(self, device: str) -> PackedDevice | None:
        """The packed artifact of a further ``device``, None when the run has none for it."""
        return next((artifact for artifact in self.device_artifacts if artifact.device == device), None)


class Finding(Contract):
    id: str = Field(description="Failure catalogue ID, e.g. F02 (instance-type for the type sanity check).")
    severity: Literal["blocking", "warning"]
    message: str
    fix: str
    evidence: str = Field("", description="The figures or text the finding rests on.")


class PreflightResult(Contract):
    findings: list[Finding] = Field(default_factory=list)
    checked: list[str] = Field(default_factory=list, description="Checks that ran, with their F-IDs.")
    skipped: list[str] = Field(default_factory=list, description="Checks that could not run, and why.")
    quotas: dict[str, float] = Field(
        default_factory=dict,
        description="F39: the account's SageMaker quotas the run draws on, by Service Quotas name, as read "
        "before the run (empty where none was read: locally, or Service Quotas refused).",
    )
    canary: dict[str, Any] | None = Field(
        None,
        description="Local runs: the packed artifact loaded and asked once per task in the image's DLC-like "
        "environment (workflows/container/canary.py): outcome, seconds, versions.",
    )


class PreflightRequest(StepRequest):
    convert: ConvertResult
    pack: PackResult
    spec_check: PreflightResult | None = Field(
        None,
        description="What CheckSpec found on the spec alone: its checks are not run again, their findings "
        "are carried into this step's result. None runs every check here.",
    )


class DeployOverrides(Contract):
    """Changes a remediation makes to the spec's hosting for the next attempt.

    ``None`` keeps the spec's value. Every hosting mode applies the overrides that concern it when
    it deploys; a remediation planner writes them (one place decides, every mode obeys).
    """

    serverless_memory_mb: int | None = Field(None, description="F14: ServerlessConfig.MemorySizeInMB.")
    inference_ami_version: str | None = Field(None, description="F20: ProductionVariant.InferenceAmiVersion.")
    workers: int | None = Field(None, description="F02: SAGEMAKER_MODEL_SERVER_WORKERS.")
    ort_intra_op_threads: int | None = Field(None, description="F02: ORT_INTRA_OP_THREADS (0 = all cores).")
    ic_min_memory_mb: int | None = Field(
        None, description="F10: ComputeResourceRequirements.MinMemoryRequiredInMb."
    )
    extra_requirements: list[str] = Field(
        default_factory=list, description="F01/F17: lines added to code/requirements.txt before repacking."
    )


class DeployAttempt(Contract):
    """Which configuration the next deploy uses; remediation branches rewrite it."""

    number: int = 1
    instance_type_index: int = Field(0, description="F06/F07: index into hosting.instance_type_fallbacks.")
    region_index: int = Field(
        0, description="F06 past the last type: index into hosting.regions (0: primary)."
    )
    overrides: DeployOverrides = Field(default_factory=DeployOverrides)
    history: list[RemediationRecord] = Field(default_factory=list)


class AttemptRequest(StepRequest):
    attempt: DeployAttempt


class DeployRequest(StepRequest):
    pack: PackResult
    attempt: DeployAttempt


class DeployResult(Contract):
    endpoint_name: str
    endpoint_config_name: str
    model_names: list[str]
    instance_type: str
    instance_pools: list[str] = Field(
        default_factory=list,
        description="The variant's InstancePools by priority (instance_type first); empty: one type.",
    )
    provision_timeout_s: int | None = Field(
        None, description="VariantInstanceProvisionTimeoutInSeconds of a pooled variant."
    )
    device_models: dict[str, str] = Field(
        default_factory=dict,
        description="Pools across devices: the Model serving each device's pools (the others' by ModelNameOverride).",
    )
    created_at: datetime
    region: str | None = Field(
        None, description="The endpoint's Region where not the run's (hosting.regions)."
    )
    mode: str = Field("realtime", description="The hosting mode that created the endpoint.")
    target: dict[str, str] = Field(
        default_factory=dict,
        description="InvokeEndpoint parameters that reach the run's own model (InferenceComponentName, "
        "TargetContainerHostname); empty for a single-model endpoint.",
    )
    targets: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="The same for every model on the endpoint, by model name."
    )
    inference_components: list[str] = Field(
        default_factory=list, description="Components the wait loop creates once the endpoint is InService."
    )
    staging_uris: list[str] = Field(
        default_factory=list,
        description="S3 prefixes the mode wrote (engine model repositories); teardown removes them.",
    )
    effective_hosting: dict[str, Any] = Field(
        default_factory=dict, description="The hosting settings this attempt used, overrides applied."
    )


class WaitLoop(Contract):
    """Where a wait loop stands after a poll: how many polls, the next Wait's seconds, seconds waited."""

    polls: int = 0
    next_wait_s: int = 0
    waited_s: float = 0.0


class ComponentStatus(Contract):
    """One inference component as the wait loop last saw it."""

    name: str
    status: str
    desired_copies: int | None = None
    current_copies: int | None = None
    failure_reason: str | None = None


class EndpointStatus(WaitLoop):
    status: str = Field(
        description="InService once the hosting is ready to serve (components and scaling too)."
    )
    failure_reason: str | None = None
    has_variants: bool = False
    instance_assigned: bool = Field(
        False,
        description="ProductionVariants present, or PendingDeploymentSummary shows an instance (F06 reads it).",
    )
    creation_time: datetime | None = None
    last_modified_time: datetime | None = None
    endpoint_status: str | None = Field(None, description="DescribeEndpoint's EndpointStatus as polled.")
    phase: str = Field(
        "endpoint", description="What the wait loop is waiting for: endpoint, components, ready."
    )
    components: list[ComponentStatus] = Field(default_factory=list)
    instance_pools: dict[str, int] = Field(
        default_factory=dict, description="CurrentInstanceCount per pooled instance type, priority order."
    )
    pools_line: str = Field(
        "", description="The pools as the run's log shows them, e.g. 'priority 1 ...: 0'."
    )


class DescribeRequest(StepRequest):
    deploy: DeployResult
    poll: EndpointStatus | None = None


class RouterRequest(StepRequest):
    deploy: DeployResult
    attempt: DeployAttempt


class WarmupRequest(StepRequest):
    deploy: DeployResult
    router: RouterResult | None = Field(None, description="A run across Regions: its router, warmed too.")


class BenchmarkPlanRequest(StepRequest):
    deploy: DeployResult
    warmup: WarmupResult
    attempt: DeployAttempt = Field(
        default_factory=DeployAttempt,
        description="Names the benchmark job per try: its number and how many remediations came before.",
    )


class BenchmarkPlan(Contract):
    """Where the load generator runs, and why."""

    runner: Literal["lambda", "processing-job"]
    reason: str
    planned_s: float
    job_name: str = Field(description="Name of the benchmark processing job (used only by that runner).")
    job_instance_type: str
    lines: list[str] = Field(
        default_factory=list,
        description="The measurement plan, printed before measuring: how long, and what cannot be bounded.",
    )
    findings: list[Finding] = Field(
        default_factory=list,
        description="One warning naming the measurements whose cap cannot reach the n their p99 bound needs.",
    )


class BenchmarkRequest(StepRequest):
    deploy: DeployResult
    router: RouterResult | None = Field(None, description="A run across Regions: its router, measured too.")


class BenchmarkJobStatus(WaitLoop):
    """One poll of the benchmark processing job."""

    job_name: str
    status: str
    failure_reason: str | None = None
    exit_message: str | None = None
    output_uri: str
    started_at: datetime
    ended_at: datetime | None = None
    fleet_before: dict[str, int] = Field(
        default_factory=dict, description="A pooled endpoint's instances per type when the job started."
    )


class BenchmarkJobRequest(StepRequest):
    deploy: DeployResult
    plan: BenchmarkPlan
    job: BenchmarkJobStatus | None = None
    router: RouterResult | None = Field(None, description="A run across Regions: its router, measured too.")


class ErrorInfo(Contract):
    """What a Catch with ``ResultPath: $.error`` writes."""

    Error: str
    Cause: str = ""


class Alternative(Contract):
    """Another catalogue entry the evidence also supports, less well."""

    id: str
    title: str
    action: str
    confidence: float


class Diagnosis(Contract):
    id: str = Field(description="Failure catalogue ID (F01..F35, docs/failures.md) or 'unknown'.")
    title: str
    evidence: list[str]
    action: str = Field(
        description="Remediation the state machine may take, or 'fail' (workflows/diagnosis/actions.py)."
    )
    confidence: float
    fix: str = Field("", description="What fixes it, from the failure catalogue.")
    details: dict[str, str] = Field(
        default_factory=dict, description="What the action needs from the evidence (e.g. module)."
    )
    alternatives: list[Alternative] = Field(default_factory=list)


class TeardownResult(Contract):
    deleted: list[str] = Field(description="Everything deleted, across every pass (ResourceBusy retries).")
    kept: list[str]
    remaining: list[str]
    passes: int = Field(1, ge=1, description="Passes it took: 1 + the ResourceBusy retries.")


class ReportResult(Contract):
    result_uri: str
    report_uri: str
    status: Literal["SUCCEEDED", "FAILED"]


class PipelineState(Contract):
    """The whole execution state of the deploy pipeline."""

    run_id: str
    spec: RunSpec
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    attempt: DeployAttempt = Field(default_factory=DeployAttempt)
    spec_check: PreflightResult | None = None
    convert: ConvertResult | None = None
    pack: PackResult | None = None
    preflight: PreflightResult | None = None
    deploy: DeployResult | None = None
    endpoint: EndpointStatus | None = None
    router: RouterResult | None = None
    warmup: WarmupResult | None = None
    benchmark_plan: BenchmarkPlan | None = None
    benchmark_job: BenchmarkJobStatus | None = None
    benchmark: BenchmarkResult | None = None
    error: ErrorInfo | None = None
    diagnosis: Diagnosis | None = None
    remediation: RemediationPlan | None = None
    teardown: TeardownResult | None = None
    teardown_error: ErrorInfo | None = None
    report: ReportResult | None = None


class ReportRequest(Contract):
    state: PipelineState
    status: Literal["SUCCEEDED", "FAILED"]
