"""S3 upload -> redeploy: the pipeline's input, its execution name, and an idempotent start.

The EventBridge rule matches ``Object Created`` for ``models/<model>/deploybench.yaml`` (the
run spec, uploaded after the model files beside it) and its input transformer writes a
``RedeployTrigger``. ``StartRedeploy`` starts the redeploy pipeline with a name derived from
bucket, key and version: EventBridge and S3 deliver at least once, and a second StartExecution
with the same name cannot start a second run (same name and input while running returns the
same execution; otherwise AWS answers ExecutionAlreadyExists for 90 days).
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError
from pydantic import Field

from workflows.aws.clients import error_code, translate
from workflows.contracts import Contract
from workflows.naming import MODELS_PREFIX

if TYPE_CHECKING:
    from types_boto3_stepfunctions import SFNClient

SPEC_FILE = "deploybench.yaml"
# Where StartRedeploy finds the redeploy pipeline (set by the CDK stack).
STATE_MACHINE_ENV = "DEPLOYBENCH_REDEPLOY_STATE_MACHINE_ARN"
# Execution names: 1-80 characters; CloudWatch Logs and X-Ray accept only [A-Za-z0-9_-] in them.
_UNSAFE = re.compile(r"[^a-z0-9]+")


class RedeployTrigger(Contract):
    """The redeploy pipeline's input: one uploaded version of a model's run spec."""

    bucket: str
    key: str
    version_id: str | None = Field(None, description="S3 version of the spec (the bucket is versioned).")
    etag: str = ""
    size: int = 0
    sequencer: str = Field(
        "", description="S3's per-key event order (hex); later uploads of the same key compare greater."
    )


class StartOutcome(Contract):
    execution_arn: str
    name: str
    duplicate: bool = Field(
        description=(
            "True when AWS refused the name (ExecutionAlreadyExists: that upload's run has ended, or ran "
            "with another input). A re-delivery while the run is still going returns that run, not a refusal."
        )
    )


def model_folder(key: str) -> str:
    """``models/team/bert/deploybench.yaml`` -> ``models/team/bert/``."""
    return key.rsplit("/", 1)[0] + "/" if "/" in key else ""


def _slug(text: str, limit: int) -> str:
    return _UNSAFE.sub("-", text.lower()).strip("-")[:limit].strip("-") or "model"


def _digest(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def execution_group(bucket: str, key: str) -> str:
    """The name prefix every redeploy of one model shares: ``rd-<model slug>-<10 hex of bucket/key>``.

    The hash keeps two models whose slugs collide (case, punctuation, truncation) apart.
    """
    model = model_folder(key).removeprefix(MODELS_PREFIX).rstrip("/")
    return f"rd-{_slug(model, 32)}-{_digest(bucket, key)[:10]}"


def execution_name(trigger: RedeployTrigger) -> str:
    """``<group>-<16 hex of bucket/key/version>``: the same upload always gets the same name (≤ 80 chars).

    Without a version id (an unversioned bucket) the ETag and sequencer identify the upload.
    """
    version = trigger.version_id or f"{trigger.etag}/{trigger.sequencer}"
    # At most 3 + 32 + 1 + 10 + 1 + 16 = 63 characters, all [a-z0-9-].
    return (
        f"{execution_group(trigger.bucket, trigger.key)}-{_digest(trigger.bucket, trigger.key, version)[:16]}"
    )


def sequencer_order(sequencer: str, width: int) -> str:
    """Comparable form of an S3 sequencer: sequencers of one key may differ in length; S3 documents
    comparing them right-padded with zeros, lexicographically."""
    return sequencer.upper().ljust(width, "0")


def start_redeploy(trigger: RedeployTrigger, *, sfn: SFNClient, state_machine_arn: str) -> StartOutcome:
    """Start the redeploy pipeline for one upload, at most once.

    Raises:
        AwsThrottled, AwsServiceUnavailable: transient; EventBridge retries the delivery.
    """
    name = execution_name(trigger)
    try:
        arn = sfn.start_execution(
            stateMachineArn=state_machine_arn, name=name, input=trigger.model_dump_json()
        )["executionArn"]
    except ClientError as error:
        if error_code(error) != "ExecutionAlreadyExists":
            raise translate(error, f"start redeploy {name}") from error
        arn = state_machine_arn.replace(":stateMachine:", ":execution:") + f":{name}"
        return StartOutcome(execution_arn=arn, name=name, duplicate=True)
    return StartOutcome(execution_arn=str(arn), name=name, duplicate=False)
