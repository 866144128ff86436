"""The redeploy pipeline's steps: read the uploaded spec and snapshot its model; order uploads of one model.

A redeploy pins what was uploaded: the spec is read at the event's S3 version, and the model
folder beside it is copied (server-side) to ``sources/<run id>/`` before the run waits for its
turn, so a later upload cannot change the files under a run that is already queued.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import yaml
from boto3.s3.transfer import TransferConfig
from pydantic import Field

from workflows.aws.clients import aws_errors, paginate
from workflows.aws.storage import list_keys
from workflows.contracts import Contract, PipelineState
from workflows.errors import ModelSourceInvalid, SpecInvalid
from workflows.naming import MODELS_PREFIX, new_run_id, source_prefix
from workflows.redeploy.triggers import (
    SPEC_FILE,
    RedeployTrigger,
    execution_group,
    model_folder,
    sequencer_order,
)
from workflows.settings import Settings
from workflows.spec.pipeline import parse_spec

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client
    from types_boto3_stepfunctions import SFNClient

# Server-side copies in 64 MB parts (the same part size as uploads), 8 at a time.
COPY = TransferConfig(
    multipart_threshold=64 * 1024 * 1024, multipart_chunksize=64 * 1024 * 1024, max_concurrency=8
)


class PrepareRequest(Contract):
    trigger: RedeployTrigger
    execution_name: str


class RedeployPlan(Contract):
    group: str = Field(description="Execution-name prefix shared by every redeploy of this model.")
    sequencer: str
    spec_uri: str
    source_uri: str
    pipeline: PipelineState = Field(description="The child deploy pipeline's whole input.")


class QueueRequest(Contract):
    state_machine_arn: str
    execution_arn: str
    group: str
    sequencer: str
    poll_s: int = Field(60, ge=1, le=3600)


class QueueDecision(Contract):
    decision: Literal["proceed", "wait", "superseded"]
    wait_s: int
    older: list[str] = Field(
        default_factory=list, description="Running redeploys of this model uploaded before."
    )
    newer: list[str] = Field(
        default_factory=list, description="Running redeploys of this model uploaded after."
    )


def _read_spec(trigger: RedeployTrigger, *, s3: S3Client) -> tuple[dict[str, Any], datetime, str]:
    version = f" (version {trigger.version_id})" if trigger.version_id else ""
    origin = f"s3://{trigger.bucket}/{trigger.key}{version}"
    if not (trigger.key.startswith(MODELS_PREFIX) and trigger.key.endswith("/" + SPEC_FILE)):
        raise SpecInvalid(
            f"{origin} is not a model's run spec.",
            fix=f"upload the model folder to {MODELS_PREFIX}<model>/, then its run spec as {MODELS_PREFIX}<model>/{SPEC_FILE}",
        )
    request: dict[str, Any] = {"Bucket": trigger.bucket, "Key": trigger.key}
    if trigger.version_id:
        request["VersionId"] = trigger.version_id
    with aws_errors(f"read {origin}"):
        response = s3.get_object(**request)
        body = response["Body"].read()
    try:
        data = yaml.safe_load(body.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        raise SpecInvalid(
            f"{origin} is not a YAML run spec: {error}",
            fix="upload a spec like examples/minilm-realtime.yaml",
        ) from None
    return data, response["LastModified"], origin


def snapshot_folder(trigger: RedeployTrigger, *, s3: S3Client, bucket: str, run_id: str) -> str:
    """Copy the model files beside the spec to the run's source prefix; returns its s3:// URI.

    Raises:
        ModelSourceInvalid: there are no model files beside the spec.
    """
    folder = model_folder(trigger.key)
    keys = [
        k
        for k in list_keys(s3, f"s3://{trigger.bucket}/{folder}")
        if k != trigger.key and not k.endswith("/")
    ]
    if not keys:
        raise ModelSourceInvalid(
            f"s3://{trigger.bucket}/{folder} holds no model files beside {SPEC_FILE}.",
            fix=f"upload the model folder (config.json, weights, tokenizer) before {SPEC_FILE}, or set model.source in the spec",
        )
    target = source_prefix(run_id)
    for key in keys:
        with aws_errors(f"copy s3://{trigger.bucket}/{key}"):
            s3.copy({"Bucket": trigger.bucket, "Key": key}, bucket, target + key[len(folder) :], Config=COPY)
    return f"s3://{bucket}/{target}"


def prepare_redeploy(request: PrepareRequest, *, s3: S3Client, settings: Settings) -> RedeployPlan:
    """The deploy pipeline input for one uploaded version; nothing but the source snapshot is created.

    The run id is derived from the upload (its time and the execution name), so a retried step
    names the same run and copies to the same prefix.

    Raises:
        SpecInvalid: the object is not a valid run spec.
        ModelSourceInvalid: the spec names no source and no model files are beside it.
    """
    trigger = request.trigger
    data, uploaded_at, origin = _read_spec(trigger, s3=s3)
    spec = parse_spec(data, origin=origin)
    # 8 hex of the execution name: two uploads in the same second still name different runs.
    run_id = new_run_id(spec.name, now=uploaded_at, suffix=request.execution_name[-8:])
    model = data.get("model") if isinstance(data, dict) else None
    if isinstance(model, dict) and "source" in model:
        source = spec.model.source
    else:
        source = snapshot_folder(trigger, s3=s3, bucket=settings.bucket, run_id=run_id)
        spec = spec.model_copy(update={"model": spec.model.model_copy(update={"source": source})})
    return RedeployPlan(
        group=execution_group(trigger.bucket, trigger.key),
        sequencer=trigger.sequencer,
        spec_uri=origin,
        source_uri=source,
        pipeline=PipelineState(run_id=run_id, spec=spec),
    )


def _order(sequencer: str, started: datetime, name: str, width: int) -> tuple[str, datetime, str]:
    # Without a sequencer (or with equal ones) the start time orders uploads; the name breaks ties.
    return sequencer_order(sequencer, width) if sequencer else "", started, name


def check_queue(request: QueueRequest, *, sfn: SFNClient) -> QueueDecision:
    """Whether this redeploy may run now, must wait for an older one, or is superseded by a newer one.

    Older uploads go first, so the newest waits while one runs; an older one that is still
    waiting when a newer one arrives ends without deploying (it has created nothing yet). The
    rule is the same seen from every execution, so two of them never wait for each other.
    """
    with aws_errors("list running redeploys"):
        running = paginate(
            sfn,
            "list_executions",
            "executions",
            stateMachineArn=request.state_machine_arn,
            statusFilter="RUNNING",
        )
        peers = [
            e
            for e in running
            if e["name"].startswith(request.group + "-") and e["executionArn"] != request.execution_arn
        ]
        mine = sfn.describe_execution(executionArn=request.execution_arn)
        inputs = {e["name"]: sfn.describe_execution(executionArn=e["executionArn"]) for e in peers}
    sequencers = {name: json.loads(d.get("input") or "{}").get("sequencer", "") for name, d in inputs.items()}
    width = max([len(request.sequencer), *map(len, sequencers.values())])
    both = bool(request.sequencer) and all(sequencers.values())
    me = _order(request.sequencer if both else "", mine["startDate"], mine["name"], width)
    older: list[str] = []
    newer: list[str] = []
    for name, description in inputs.items():
        peer = _order(sequencers[name] if both else "", description["startDate"], name, width)
        (older if peer < me else newer).append(name)
    if newer:
        return QueueDecision(decision="superseded", wait_s=0, older=sorted(older), newer=sorted(newer))
    if older:
        return QueueDecision(decision="wait", wait_s=request.poll_s, older=sorted(older))
    return QueueDecision(decision="proceed", wait_s=0)
