"""Names, tags and S3 keys of everything a run creates.

Names derive from the run id, so teardown can find every resource of a run even when the
step that created it failed before returning; tags let the janitor find leaks across runs.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta

PREFIX = "db"
TAG_RUN_ID = "deploybench:run-id"
TAG_SPEC = "deploybench:spec"
TAG_EXPIRES_AT = "deploybench:expires-at"
TAG_MANAGED = "deploybench:managed"
DEFAULT_TTL = timedelta(hours=6)

# SageMaker resource names: 63 characters, [a-zA-Z0-9](-*[a-zA-Z0-9])*.
_MAX_NAME = 63


def new_run_id(spec_name: str, now: datetime | None = None, suffix: str | None = None) -> str:
    """``<spec>-<yyyymmdd-hhmmss>-<4 hex>``: sortable, unique, at most 45 characters.

    ``suffix`` replaces the random part where the id must be reproducible (a redeploy derives 8
    hex from its execution name, so a retried step names the same run: at most 49 characters).
    """
    now = now or datetime.now(UTC)
    return f"{spec_name}-{now:%Y%m%d-%H%M%S}-{suffix or secrets.token_hex(2)}"


def _checked(name: str) -> str:
    if len(name) > _MAX_NAME:
        raise ValueError(f"resource name {name!r} is longer than {_MAX_NAME} characters")
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


def tags(
    run_id: str, spec_name: str, extra: dict[str, str] | None = None, *, now: datetime | None = None
) -> list[dict[str, str]]:
    """AWS tag list for every resource of the run."""
    expires = (now or datetime.now(UTC)) + DEFAULT_TTL
    base = {
        TAG_MANAGED: "true",
        TAG_RUN_ID: run_id,
        TAG_SPEC: spec_name,
        TAG_EXPIRES_AT: expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    merged = {**(extra or {}), **base}
    return [{"Key": key, "Value": value} for key, value in merged.items()]


def benchmark_job_name(run_id: str) -> str:
    """The run's benchmark processing job (one per run: the name is also how failures stop it)."""
    return _checked(f"{resource_prefix(run_id)}-bench")


# The artifact bucket's run prefixes: every key a run writes starts with one of these.
STAGING_PREFIX = "staging/"
ARTIFACTS_PREFIX = "artifacts/"
RESULTS_PREFIX = "results/"


def staging_prefix(run_id: str) -> str:
    """Temporary converted model folder; deleted by teardown."""
    return f"{STAGING_PREFIX}{run_id}/"


def artifact_key(run_id: str, compression: str) -> str:
    suffix = "model.tar.gz" if compression != "none" else "model.tar"
    return f"{ARTIFACTS_PREFIX}{run_id}/{suffix}"


def results_prefix(run_id: str) -> str:
    return f"{RESULTS_PREFIX}{run_id}/"


# The CDK stack and the outputs the CLI reads to find what to start.
STACK_NAME = "Deploybench"
OUTPUT_DEPLOY_PIPELINE_ARN = "DeployPipelineArn"
OUTPUT_BUCKET = "ArtifactBucketName"


# Uploads under this prefix start the redeploy pipeline (see workflows/triggers.py).
MODELS_PREFIX = "models/"
# Local model folders the CLI uploads for an AWS run, and redeploy snapshots of an upload.
SOURCES_PREFIX = "sources/"
# Benchmark sweep summaries, reports and each sweep name's baseline.
SWEEPS_PREFIX = "sweeps/"
# Extra tag a user may put on a kept endpoint (spec ``tags``) so the janitor leaves it alone.
TAG_KEEP = "deploybench:keep"


def function_name(placeholder: str) -> str:
    """``ConvertFunctionArn`` -> ``deploybench-convert`` (the same name locally and on AWS)."""
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


def component_log_group(component: str) -> str:
    """An inference component's containers log apart from their endpoint's."""
    return f"{SAGEMAKER_LOG_ROOT}/InferenceComponents/{component}"


def sagemaker_log_groups(name: str) -> tuple[str, ...]:
    """Every log group SageMaker writes for run resources named ``name`` (``db-*`` in a policy)."""
    return (endpoint_log_group(name), component_log_group(name), PROCESSING_JOB_LOG_GROUP)
