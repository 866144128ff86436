"""Names, tags and S3 keys of everything a run creates.

Names derive from the run id, so teardown can find every resource of a run even when the
step that created it failed before returning; tags let the janitor find leaks across runs.

Which names AWS lets a run use again decides what is named per attempt:
- processing jobs (like training and transform jobs) can never be deleted, and their names "must
  be unique within an AWS Region in an AWS account" for good: every benchmark job is named per
  try (``benchmark_job_name``), even a rerun on the same endpoint;
- endpoints, endpoint configs, models and inference components must be unique only while they
  exist, and a name is free again once deleted; they are named per deploy attempt anyway, since a
  stalled endpoint cannot be deleted while Creating (F06) and its config and models stay with it;
- scaling policies and alarms are named after their component and are idempotent puts;
- Step Functions execution names (the run id) are unique for 90 days after the run closes.
Every name is checked against botocore's constraint for SageMaker names (at most 63 characters,
``[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}``) when it is made, not when AWS refuses it.
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from workflows.spec.model import hub_source

if TYPE_CHECKING:
    from types_boto3_sagemaker.type_defs import TagTypeDef

    from workflows.spec.pipeline import RunSpec

PREFIX = "db"
TAG_RUN_ID = "deploybench:run-id"
TAG_SPEC = "deploybench:spec"
TAG_EXPIRES_AT = "deploybench:expires-at"
TAG_MANAGED = "deploybench:managed"
TAG_MODEL_COMMIT = "deploybench:model-commit"
"""An hf:// model's repo and commit (``org/name@<40 hex>``), on runs whose source is pinned."""
DEFAULT_TTL = timedelta(hours=6)
"""What the janitor allows a managed resource that carries no readable expiry tag."""

# botocore's sagemaker model: EndpointName, EndpointConfigName, ProcessingJobName (min 1, max 63,
# this pattern); ModelName and InferenceComponentName allow inner dashes the same way.
MAX_NAME = 63
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")


def new_run_id(spec_name: str, now: datetime | None = None, suffix: str | None = None) -> str:
    """``<spec>-<yyyymmdd-hhmmss>-<4 hex>``: sortable, unique, at most 45 characters.

    ``suffix`` replaces the random part where the id must be reproducible (a redeploy derives 8
    hex from its execution name, so a retried step names the same run: at most 49 characters).
    """
    now = now or datetime.now(UTC)
    return f"{spec_name}-{now:%Y%m%d-%H%M%S}-{suffix or secrets.token_hex(2)}"


def _checked(name: str) -> str:
    if len(name) > MAX_NAME or not NAME_PATTERN.match(name):
        raise ValueError(
            f"resource name {name!r} ({len(name)} characters) is not a SageMaker name: at most {MAX_NAME} "
            "letters, digits and dashes, starting and ending with a letter or digit; shorten the spec's name"
        )
    return name


def resource_prefix(run_id: str) -> str:
    """Every SageMaker resource of the run starts with this."""
    return f"{PREFIX}-{run_id}"


def endpoint_name(run_id: str, attempt: int) -> str:
    """One endpoint per attempt: a stalled endpoint cannot be deleted while Creating, so a retry
    on another instance type needs a new name (the old one is deleted once it fails)."""
    return _checked(f"{resource_prefix(run_id)}-a{attempt}")


def endpoint_config_name(run_id: str, attempt: int) -> str:
    return _checked(f"{resource_prefix(run_id)}-a{attempt}")


def model_name(run_id: str, attempt: int, index: int = 0) -> str:
    return _checked(f"{resource_prefix(run_id)}-a{attempt}-m{index}")


def router_name(run_id: str) -> str:
    """The run's one inference router, in its primary Region (``db-<run id>-router``: teardown's prefix finds it)."""
    return _checked(f"{resource_prefix(run_id)}-router")


def inference_component_name(run_id: str, attempt: int, index: int) -> str:
    """The attempt's ``index``-th inference component (0 is the run's own model)."""
    return _checked(f"{resource_prefix(run_id)}-a{attempt}-ic{index}")


def tags(run_id: str, spec: RunSpec, *, now: datetime | None = None) -> list[TagTypeDef]:
    """AWS tag list for every resource of the run: who made it, and when the janitor may reap it.

    The expiry is the creation time plus the longest the run may legally still last
    (``workflows.janitor.lifetime.run_lifetime``), so a live run is never taken for a leak.
    """
    from workflows.janitor.lifetime import run_lifetime

    expires = (now or datetime.now(UTC)) + run_lifetime(spec)
    base = {
        TAG_MANAGED: "true",
        TAG_RUN_ID: run_id,
        TAG_SPEC: spec.name,
        TAG_EXPIRES_AT: expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    hub = hub_source(spec.model.source)
    if hub is not None and hub.pinned:
        base[TAG_MODEL_COMMIT] = f"{hub.repo}@{hub.revision}"
    merged = {**spec.tags, **base}
    return [{"Key": key, "Value": value} for key, value in merged.items()]


def benchmark_job_name(run_id: str, attempt: int, remediations: int) -> str:
    """``db-<run id>-a<attempt>-b<remediations + 1>``: one processing job name per benchmark try.

    A job's name is never free again (jobs cannot be deleted), so a rerun after a remediation on
    the same endpoint (warm, retry) needs a name of its own: ``remediations`` (the decisions in
    ``attempt.history``) grows by one on every loop back through PlanRemediation. A retried
    PlanBenchmark or StartBenchmarkJob gets the same inputs, hence the same name, and follows the
    job it already created.
    """
    return _checked(f"{resource_prefix(run_id)}-a{attempt}-b{remediations + 1}")


# The artifact bucket's run prefixes: every key a run writes starts with one of these.
STAGING_PREFIX = "staging/"
ARTIFACTS_PREFIX = "artifacts/"
RESULTS_PREFIX = "results/"


def staging_prefix(run_id: str) -> str:
    """Temporary converted model folder; deleted by teardown."""
    return f"{STAGING_PREFIX}{run_id}/"


# A second device's converted folder sits under the run's staging prefix (teardown deletes it with
# the rest), in a folder the primary artifact's pack leaves out.
DEVICE_STAGING = "devices/"


def device_staging_prefix(run_id: str, device: str) -> str:
    """The converted folder of the run's artifact for ``device`` (pools across devices)."""
    return f"{staging_prefix(run_id)}{DEVICE_STAGING}{device}/"


def artifact_key(run_id: str, compression: str, device: str | None = None) -> str:
    """The packed artifact's key; ``device`` names a second device's (pools across devices)."""
    suffix = "model.tar.gz" if compression != "none" else "model.tar"
    return f"{ARTIFACTS_PREFIX}{run_id}/{device + '/' if device else ''}{suffix}"


def results_prefix(run_id: str) -> str:
    return f"{RESULTS_PREFIX}{run_id}/"


# The CDK stack and the outputs the CLI reads to find what to start.
STACK_NAME = "Deploybench"
OUTPUT_DEPLOY_PIPELINE_ARN = "DeployPipelineArn"
OUTPUT_BUCKET = "ArtifactBucketName"


# Uploads under this prefix start the redeploy pipeline (see workflows/redeploy/triggers.py).
MODELS_PREFIX = "models/"
# Local model folders the CLI uploads for an AWS run, and redeploy snapshots of an upload.
SOURCES_PREFIX = "sources/"
# Benchmark sweep summaries, reports and each sweep name's baseline.
SWEEPS_PREFIX = "sweeps/"
# Converted artifacts by content (workflows/conversion/cache.py): shared by runs, never a run's.
CONVERSIONS_PREFIX = "conversions/"
# Extra tag a user may put on a kept endpoint (spec ``tags``) so the janitor leaves it alone.
TAG_KEEP = "deploybench:keep"


def function_name(placeholder: str) -> str:
    """``ConvertToOnnxFunctionArn`` -> ``deploybench-convert-to-onnx`` (the same name locally and on AWS)."""
    stem = placeholder.removesuffix("FunctionArn")
    words = "".join(f"-{c.lower()}" if c.isupper() else c for c in stem).lstrip("-")
    return f"deploybench-{words}"


def state_machine_name(name: str) -> str:
    """``deploy_pipeline`` -> ``deploybench-deploy-pipeline``."""
    return f"deploybench-{name.replace('_', '-')}"


def source_prefix(run_id: str) -> str:
    """A run's copy of its model folder (uploaded by the CLI, or snapshotted by a redeploy)."""
    return f"{SOURCES_PREFIX}{run_id}/"


# What the pipeline hands SageMaker, and so what the SageMaker execution role must reach:
# ModelDataUrl archives under artifacts/; S3Prefix ModelDataSource folders (Triton, LMI) and the
# benchmark job's code and config inputs under staging/<run>/; model folders vLLM mounts under
# sources/. SageMaker lists an S3Prefix before it copies it, so each is listed as well as read.
SAGEMAKER_READ_PREFIXES = (ARTIFACTS_PREFIX, STAGING_PREFIX, SOURCES_PREFIX)
# The benchmark job's output (ProcessingOutputConfig) goes next to the run's result.
SAGEMAKER_WRITE_PREFIXES = (RESULTS_PREFIX,)


# Where SageMaker sends container output (the execution role writes there, diagnosis reads it).
SAGEMAKER_LOG_ROOT = "/aws/sagemaker"
PROCESSING_JOB_LOG_GROUP = f"{SAGEMAKER_LOG_ROOT}/ProcessingJobs"


def endpoint_log_group(endpoint: str) -> str:
    """A real-time or serverless endpoint's containers: ``/aws/sagemaker/Endpoints/<endpoint>``."""
    return f"{SAGEMAKER_LOG_ROOT}/Endpoints/{endpoint}"


def endpoint_traces_log_group(endpoint: str) -> str:
    """Where an endpoint with TracingConfig sends its sampled requests: ``<endpoint's group>/traces``.

    Under the endpoint's own group name, so the SageMaker role's grant on ``/aws/sagemaker/Endpoints/db-*``
    covers it (an IAM ``*`` matches ``/``): tracing needs no further logs permission.
    """
    return f"{endpoint_log_group(endpoint)}/traces"


def component_log_group(component: str) -> str:
    """An inference component's containers log apart from their endpoint's."""
    return f"{SAGEMAKER_LOG_ROOT}/InferenceComponents/{component}"


def sagemaker_log_groups(name: str) -> tuple[str, ...]:
    """Every log group SageMaker writes for run resources named ``name`` (``db-*`` in a policy)."""
    return (endpoint_log_group(name), component_log_group(name), PROCESSING_JOB_LOG_GROUP)
