"""Names, tags, paths and settings of the deployed stack, in one place.

Run-level names and tags (``db-<run id>`` resources, ``deploybench:*`` tags, the stack name and
the outputs the CLI reads) come from ``workflows.naming``, which the runtime code shares.
"""

from __future__ import annotations

from pathlib import Path

from workflows.naming import (
    MODELS_PREFIX,
    OUTPUT_BUCKET,
    OUTPUT_DEPLOY_PIPELINE_ARN,
    PREFIX,
    SOURCES_PREFIX,
    STACK_NAME,
    SWEEPS_PREFIX,
    TAG_MANAGED,
    function_name,
    state_machine_name,
)
from workflows.redeploy.triggers import SPEC_FILE

ROOT = Path(__file__).resolve().parents[1]
IMAGE_DOCKERFILE = "infra/image/Dockerfile"
FUNCTION_REQUIREMENTS = ROOT / "infra" / "requirements-functions.lock"
# What the shared zip asset holds (besides its dependencies), relative to ROOT.
CODE_PACKAGES = ("lambdas", "workflows", "state_machines", "artifacts")

# Set to "1" only by tests: the zip asset then holds the handler code without installing its
# dependencies (no download, no network). infra/app.py refuses to synthesize for deployment with it.
TEST_SYNTH_ENV = "DEPLOYBENCH_TEST_SYNTH"

PYTHON_VERSION = "3.11"
PLATFORM = "manylinux2014_x86_64"

SERVICE_NAME = "deploybench"
METRICS_NAMESPACE = "deploybench"
LOG_LEVEL = "INFO"

# The stack's own resources carry these; run resources carry workflows.naming.tags() instead.
STACK_TAGS = {"deploybench:stack": STACK_NAME, "project": "deploybench"}

OUTPUT_BENCHMARK_SWEEP_ARN = "BenchmarkSweepArn"
OUTPUT_REDEPLOY_PIPELINE_ARN = "RedeployPipelineArn"
OUTPUT_ALERT_TOPIC_ARN = "AlertTopicArn"
OUTPUT_DASHBOARD = "DashboardName"
OUTPUT_ARTIFACT_KEY_ARN = "ArtifactKeyArn"

# Bucket prefixes with a lifetime (teardown removes a run's staging folder; these are the backstop).
STAGING_PREFIX = "staging/"
STAGING_EXPIRY_DAYS = 2
SOURCES_EXPIRY_DAYS = 14
NONCURRENT_EXPIRY_DAYS = 30
# Multipart uploads of 1 GB artifacts that fail half-way keep their parts (and cost) until aborted.
ABORT_MULTIPART_DAYS = 1

# CDK context keys (cdk.json, or `cdk deploy -c key=value`).
CONTEXT_SWEEP_FILE = "deploybench:sweepFile"
CONTEXT_SWEEP_SCHEDULE = "deploybench:sweepSchedule"
CONTEXT_SWEEP_ENABLED = "deploybench:sweepEnabled"
CONTEXT_JANITOR_SCHEDULE = "deploybench:janitorSchedule"
CONTEXT_JANITOR_REGIONS = "deploybench:janitorRegions"
CONTEXT_ALERT_EMAIL = "deploybench:alertEmail"
CONTEXT_KMS_KEY_ARN = "deploybench:kmsKeyArn"
DEFAULT_SWEEP_FILE = "examples/sweep-nightly.yaml"
# Mondays 03:00 UTC: a weekly sweep; every run holds an endpoint for minutes.
DEFAULT_SWEEP_SCHEDULE = "cron(0 3 ? * MON *)"
DEFAULT_JANITOR_SCHEDULE = "rate(1 hour)"

__all__ = [
    "MODELS_PREFIX",
    "OUTPUT_BUCKET",
    "OUTPUT_DEPLOY_PIPELINE_ARN",
    "PREFIX",
    "SOURCES_PREFIX",
    "SPEC_FILE",
    "STACK_NAME",
    "SWEEPS_PREFIX",
    "TAG_MANAGED",
    "function_name",
    "state_machine_name",
]
