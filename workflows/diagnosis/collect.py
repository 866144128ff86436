"""Evidence collectors: the pipeline state, DescribeEndpoint, the endpoint's CloudWatch logs.

Clients are arguments. A collector that cannot reach its source adds a note and lets the
diagnosis go on with what it has: a diagnosis must never be the step that fails.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from workflows import clock, naming
from workflows.aws.clients import error_code, error_message, is_not_found
from workflows.contracts import Diagnosis, EndpointStatus, PipelineState
from workflows.diagnosis.evidence import Evidence
from workflows.diagnosis.log_groups import group_events
from workflows.diagnosis.verdict import diagnose

if TYPE_CHECKING:
    from types_boto3_logs import CloudWatchLogsClient
    from types_boto3_sagemaker import SageMakerClient

# A Lambda has 60 s and Step Functions carries 256 KiB: read a bounded window of recent events.
MAX_LOG_EVENTS = 2000
MAX_LOG_PAGES = 20
LOG_LOOKBACK = timedelta(hours=1)
# Modes whose resources include inference components (copy counts, F09).
_COMPONENT_MODES = ("component", "zero")


def log_group(endpoint_name: str) -> str:
    """Where SageMaker sends a real-time or serverless endpoint's container output."""
    return naming.endpoint_log_group(endpoint_name)


def _guarded(evidence: Evidence, what: str, call: Callable[[], Any]) -> Any:
    """Run one collection call; on an AWS error add a note instead of failing the diagnosis."""
    try:
        return call()
    except ClientError as error:
        evidence.notes.append(f"{what}: {error_code(error)}: {error_message(error)}")
    except (BotoCoreError, NotImplementedError) as error:
        # NotImplementedError: an emulated API (moto, the local SageMaker) that lacks the call.
        evidence.notes.append(f"{what}: {type(error).__name__}: {error}")
    return None


def _described(evidence: Evidence, what: str, call: Callable[[], Any]) -> dict[str, Any] | None:
    """A guarded Describe call's response without its ResponseMetadata (None when the call failed)."""
    response = _guarded(evidence, what, call)
    if not response:
        return None
    described = dict(response)
    described.pop("ResponseMetadata", None)
    return described


def add_endpoint(evidence: Evidence, *, sagemaker: SageMakerClient, name: str) -> bool:
    """DescribeEndpoint and its endpoint config; returns False when the endpoint does not exist."""
    try:
        description: dict[str, Any] = dict(sagemaker.describe_endpoint(EndpointName=name))
    except ClientError as error:
        if is_not_found(error):
            evidence.notes.append(f"endpoint {name} does not exist (never created, or already deleted)")
            return False
        evidence.notes.append(f"describe endpoint {name}: {error_code(error)}: {error_message(error)}")
        return False
    description.pop("ResponseMetadata", None)
    evidence.endpoint = description
    evidence.observed_at = clock.now()
    if description.get("FailureReason"):
        evidence.add("describe", description["FailureReason"], origin="FailureReason")
    config_name = description.get("EndpointConfigName")
    if config_name:
        config = _described(
            evidence,
            f"describe endpoint config {config_name}",
            partial(sagemaker.describe_endpoint_config, EndpointConfigName=config_name),
        )
        if config:
            evidence.endpoint_config = config
            variants = config.get("ProductionVariants") or [{}]
            evidence.instance_type = evidence.instance_type or variants[0].get("InstanceType")
    return True


def add_inference_components(evidence: Evidence, *, sagemaker: SageMakerClient, endpoint_name: str) -> None:
    """DescribeInferenceComponent for every component on the endpoint (copy counts, F09)."""
    listed = _guarded(
        evidence,
        "list inference components",
        lambda: sagemaker.list_inference_components(EndpointNameEquals=endpoint_name),
    )
    for summary in (listed or {}).get("InferenceComponents", []):
        name = summary["InferenceComponentName"]
        described = _described(
            evidence,
            f"describe inference component {name}",
            partial(sagemaker.describe_inference_component, InferenceComponentName=name),
        )
        if described:
            evidence.inference_components.append(described)
            if described.get("FailureReason"):
                evidence.add("describe", described["FailureReason"], origin=f"{name} FailureReason")


def add_log_events(
    evidence: Evidence,
    *,
    logs: CloudWatchLogsClient,
    endpoint_name: str,
    since: datetime,
    group: str | None = None,
) -> int:
    """The endpoint's recent log events (or those of ``group``), oldest first; returns how many were read."""
    group = group or log_group(endpoint_name)
    evidence.logs_read.append(group)
    read = 0
    missing = "no container wrote output there (none started, or logs are not published in this environment)"
    for event in group_events(
        evidence,
        logs=logs,
        group=group,
        since=since,
        most=MAX_LOG_EVENTS,
        pages=MAX_LOG_PAGES,
        missing=missing,
    ):
        evidence.add("logs", str(event.get("message", "")), origin=str(event.get("logStreamName", "")))
        read += 1
    if read == 0 and not any(group in note for note in evidence.notes):
        evidence.notes.append(f"log group {group} has no events since {since:%Y-%m-%d %H:%M:%S} UTC")
    return read


def failed_phase(state: PipelineState) -> str:
    """The step that was running when the error was caught: the first result still missing."""
    if state.convert is None:
        return "convert"
    if state.pack is None:
        return "pack"
    if state.preflight is None:
        return "preflight"
    if state.deploy is None:
        return "deploy"
    if state.endpoint is None or state.endpoint.status != "InService":
        return "wait"
    if state.warmup is None:
        return "warmup"
    return "benchmark" if state.benchmark is None else "teardown"


def _last_poll(status: EndpointStatus, created_at: datetime) -> tuple[dict[str, Any], datetime]:
    """The wait loop's last poll, as DescribeEndpoint would have said it."""
    described: dict[str, Any] = {
        "EndpointStatus": status.status,
        "CreationTime": status.creation_time,
        "LastModifiedTime": status.last_modified_time,
    }
    if status.failure_reason is not None:
        described["FailureReason"] = status.failure_reason
    if status.has_variants or status.instance_assigned:
        described["ProductionVariants"] = [{"VariantName": "primary"}]
    return described, created_at + timedelta(seconds=status.waited_s)


def evidence_from_state(
    state: PipelineState, *, sagemaker: SageMakerClient, logs: CloudWatchLogsClient
) -> Evidence:
    """Evidence for the failure a pipeline execution caught, gathered live where possible."""
    spec, hosting = state.spec, state.spec.hosting
    evidence = Evidence(
        phase=failed_phase(state),
        hosting_mode=hosting.mode,
        image=getattr(hosting, "image", None),
        stall_threshold_s=spec.wait.stall_threshold_min * 60.0,
        expected_architecture=state.convert.manifest.architecture if state.convert else None,
    )
    if state.error is not None:
        evidence.add_error(state.error)
    else:
        evidence.notes.append("no error was recorded in the execution state")
    if state.deploy is not None:
        evidence.instance_type = state.deploy.instance_type
        name = state.deploy.endpoint_name
    elif evidence.phase == "deploy":
        # The deploy step may have created the endpoint before it failed: names derive from the run.
        name = naming.endpoint_name(state.run_id, state.attempt.number)
    else:
        return evidence
    instance_types = getattr(hosting, "instance_type_fallbacks", None) or []
    if evidence.instance_type is None and state.attempt.instance_type_index < len(instance_types):
        evidence.instance_type = instance_types[state.attempt.instance_type_index]
    exists = add_endpoint(evidence, sagemaker=sagemaker, name=name)
    if not exists and state.endpoint is not None and state.deploy is not None:
        evidence.endpoint, evidence.observed_at = _last_poll(state.endpoint, state.deploy.created_at)
        evidence.notes.append("endpoint facts come from the wait loop's last poll")
    if exists and any(word in hosting.mode for word in _COMPONENT_MODES):
        add_inference_components(evidence, sagemaker=sagemaker, endpoint_name=name)
    since = (state.deploy.created_at if state.deploy else clock.now() - LOG_LOOKBACK) - timedelta(minutes=1)
    add_log_events(evidence, logs=logs, endpoint_name=name, since=since)
    add_component_log_events(evidence, logs=logs, endpoint_name=name, since=since)
    return evidence


def add_component_log_events(
    evidence: Evidence, *, logs: CloudWatchLogsClient, endpoint_name: str, since: datetime
) -> int:
    """Each described component's containers log to their own group, not to the endpoint's."""
    return sum(
        add_log_events(
            evidence,
            logs=logs,
            endpoint_name=endpoint_name,
            since=since,
            group=naming.component_log_group(str(component["InferenceComponentName"])),
        )
        for component in evidence.inference_components
    )


def diagnose_failure(
    state: PipelineState, *, sagemaker: SageMakerClient, logs: CloudWatchLogsClient
) -> Diagnosis:
    """The DiagnoseFailure step: gather the evidence of the caught error and match the catalogue."""
    return diagnose(evidence_from_state(state, sagemaker=sagemaker, logs=logs))


def evidence_from_endpoint(
    name: str,
    *,
    sagemaker: SageMakerClient,
    logs: CloudWatchLogsClient,
    since: datetime,
    hosting_mode: str | None = None,
) -> Evidence:
    """Evidence about a live endpoint (``deploybench diagnose --endpoint``)."""
    evidence = Evidence(hosting_mode=hosting_mode)
    if add_endpoint(evidence, sagemaker=sagemaker, name=name):
        add_inference_components(evidence, sagemaker=sagemaker, endpoint_name=name)
    add_log_events(evidence, logs=logs, endpoint_name=name, since=since)
    add_component_log_events(evidence, logs=logs, endpoint_name=name, since=since)
    return evidence


def evidence_from_text(text: str, *, origin: str, hosting_mode: str | None = None) -> Evidence:
    """Evidence from text of unknown origin: a log export, an error message, a traceback.

    Each line is one item, so a quote shows the line it came from; a Lambda error payload pasted
    whole is parsed like a Step Functions Cause.
    """
    evidence = Evidence(hosting_mode=hosting_mode)
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        evidence.add("text", line, origin=f"{origin}:{number}")
    # A message wrapped over several lines (botocore's ReadTimeoutError, a ModelError) still matches.
    if len(lines) > 1:
        evidence.add("text", text, origin=origin, whole=True)
    return evidence
