"""The S3-upload trigger: the deployed rule's pattern and input transformer on real S3 events, the
execution name, the idempotent start, and the redeploy steps (spec at its version, source snapshot, queue)."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import boto3
import pytest

from tests.support.aws import Aws
from tests.support.infra import Synthesized, synthesize
from tests.support.triggers import BUCKET, REGION, TRIGGER, aws_bucket, waiting_machine
from workflows.redeploy.triggers import RedeployTrigger, execution_group, execution_name, start_redeploy

__all__ = ["aws_bucket"]  # a fixture, used by name

# An S3 "Object Created" event as EventBridge delivers it (bucket with EventBridge notifications on).
OBJECT_CREATED: dict[str, Any] = {
    "version": "0",
    "id": "17793124-05d4-b198-2fde-7ededc63b103",
    "detail-type": "Object Created",
    "source": "aws.s3",
    "account": "123456789012",
    "time": "2026-11-12T00:00:00Z",
    "region": REGION,
    "resources": [f"arn:aws:s3:::{BUCKET}"],
    "detail": {
        "version": "0",
        "bucket": {"name": BUCKET},
        "object": {
            "key": "models/minilm/deploybench.yaml",
            "size": 512,
            "etag": "b1946ac92492d2347c6235b4d2611184",
            "version-id": "IYV3p45BT0ac8hjHg1houSdS1a.Mc8cs",
            "sequencer": "00617F08299329D189",
        },
        "request-id": "N4N7GDK58NMKJ12R",
        "requester": "123456789012",
        "source-ip-address": "1.2.3.4",
        "reason": "PutObject",
    },
}
OBJECT_DELETED: dict[str, Any] = {
    **OBJECT_CREATED,
    "detail-type": "Object Deleted",
    "detail": {
        "version": "0",
        "bucket": {"name": BUCKET},
        "object": {
            "key": "models/minilm/deploybench.yaml",
            "version-id": "1QW9g1Z99LUNbvaaYVpW9xDlOLU.qxgF",
            "sequencer": "00617F0829934C3D0C",
        },
        "request-id": "0BH729840619AG5K",
        "requester": "123456789012",
        "source-ip-address": "1.2.3.4",
        "reason": "DeleteObject",
        "deletion-type": "Delete Marker Created",
    },
}


def with_key(event: dict[str, Any], key: str, bucket: str = BUCKET) -> dict[str, Any]:
    changed = copy.deepcopy(event)
    changed["detail"]["object"]["key"] = key
    changed["detail"]["bucket"]["name"] = bucket
    return changed


@pytest.fixture(scope="module")
def synth() -> Synthesized:
    return synthesize()


def rule_target(synth: Synthesized) -> tuple[dict[str, Any], dict[str, Any]]:
    """The deployed rule's pattern (bucket reference resolved to BUCKET) and its only target."""
    # The S3-upload rule (the stack also has the stopped-executions rule, on Step Functions events)
    [rule] = [
        r
        for r in synth.of_type("AWS::Events::Rule").values()
        if "aws.s3" in r["Properties"]["EventPattern"].get("source", [])
    ]
    pattern = json.loads(json.dumps(rule["Properties"]["EventPattern"]))
    [artifact_bucket] = [
        k for k, v in synth.of_type("AWS::S3::Bucket").items() if "LoggingConfiguration" in v["Properties"]
    ]
    assert pattern["detail"]["bucket"]["name"] == [{"Ref": artifact_bucket}]
    pattern["detail"]["bucket"]["name"] = [BUCKET]
    [target] = rule["Properties"]["Targets"]
    return pattern, target


def matches(pattern: dict[str, Any], event: dict[str, Any]) -> bool:
    """moto's EventBridge pattern matcher (the one its rules deliver with: prefix, suffix, wildcard...)."""
    from moto.events.models import EventPattern

    return EventPattern.load(json.dumps(pattern)).matches_event(event)


def test_the_rule_matches_a_new_spec_version_under_the_models_prefix(synth: Synthesized) -> None:
    pattern, _ = rule_target(synth)
    assert matches(pattern, OBJECT_CREATED)
    assert matches(pattern, with_key(OBJECT_CREATED, "models/team/bert-base/deploybench.yaml"))


@pytest.mark.parametrize(
    ("event", "why"),
    [
        (OBJECT_DELETED, "a delete"),
        (with_key(OBJECT_CREATED, "uploads/minilm/deploybench.yaml"), "another prefix"),
        (with_key(OBJECT_CREATED, "models/minilm/model.safetensors"), "a model file, not the spec"),
        (with_key(OBJECT_CREATED, "staging/run-1/deploybench.yaml"), "a run's staging folder"),
        (
            with_key(OBJECT_CREATED, "models/minilm/deploybench.yaml", bucket="someone-elses-bucket"),
            "another bucket",
        ),
    ],
)
def test_the_rule_ignores(synth: Synthesized, event: dict[str, Any], why: str) -> None:
    pattern, _ = rule_target(synth)
    assert not matches(pattern, event), why


def transform(event: dict[str, Any], paths: dict[str, str], template: str) -> Any:
    """EventBridge's input transformer: a placeholder outside quotes takes the value as JSON, inside
    quotes its text (moto's own transformer inserts strings unquoted, so it cannot be used here)."""

    def lookup(path: str) -> Any:
        value: Any = event
        for part in path.removeprefix("$.").split("."):
            value = value[part]
        return value

    values = {name: lookup(path) for name, path in paths.items()}

    def fill(match: re.Match[str]) -> str:
        quoted, name = match.group(1), match.group(2)
        value = values[name]
        return json.dumps(str(value))[1:-1] if quoted else json.dumps(value)

    return json.loads(
        re.sub(r'("?)<([\w.-]+)>\1', lambda m: f'"{fill(m)}"' if m.group(1) else fill(m), template)
    )


def test_the_input_transformer_yields_the_redeploy_pipelines_input(synth: Synthesized) -> None:
    # Given the deployed target's transformer
    _, target = rule_target(synth)
    transformer = target["InputTransformer"]
    # When it transforms a real event
    payload = transform(OBJECT_CREATED, transformer["InputPathsMap"], transformer["InputTemplate"])
    # Then the result is exactly the redeploy pipeline's input, with every field from the event
    trigger = RedeployTrigger.model_validate(payload)
    assert trigger == RedeployTrigger(
        bucket=BUCKET,
        key="models/minilm/deploybench.yaml",
        version_id="IYV3p45BT0ac8hjHg1houSdS1a.Mc8cs",
        etag="b1946ac92492d2347c6235b4d2611184",
        size=512,
        sequencer="00617F08299329D189",
    )
    # And deliveries that still fail land in the dead-letter queue after bounded retries
    assert target["RetryPolicy"]["MaximumRetryAttempts"] > 0
    assert "DeadLetterConfig" in target


def test_the_execution_name_is_derived_from_bucket_key_and_version() -> None:
    name = execution_name(TRIGGER)
    # Deterministic, and fixed: a change would let a re-delivered event start a second run after a deploy
    assert name == execution_name(TRIGGER.model_copy())
    assert name == "rd-minilm-2a3028b03a-0b21e332ebddd725"
    # Another version of the same model: another name, the same group
    other = execution_name(TRIGGER.model_copy(update={"version_id": "v2", "sequencer": "0002"}))
    assert other != name and other.startswith(execution_group(BUCKET, TRIGGER.key) + "-")
    # Another model: another group
    assert not execution_name(TRIGGER.model_copy(update={"key": "models/bert/deploybench.yaml"})).startswith(
        execution_group(BUCKET, TRIGGER.key)
    )


@pytest.mark.parametrize(
    "key",
    [
        "models/minilm/deploybench.yaml",
        "models/Équipe Données/BERT (v2)/deploybench.yaml",
        "models/" + "x" * 900 + "/deploybench.yaml",
        "models/../{weird}*[name]/deploybench.yaml",
    ],
)
def test_execution_names_are_valid_for_step_functions(key: str) -> None:
    name = execution_name(TRIGGER.model_copy(update={"key": key}))
    assert 1 <= len(name) <= 80
    assert re.fullmatch(r"[a-z0-9-]+", name), name


def test_a_redelivered_event_does_not_start_a_second_run(aws: Aws) -> None:
    sfn = boto3.client("stepfunctions", region_name=REGION)
    machine = waiting_machine(sfn)
    # When the same upload is delivered twice while its redeploy runs
    first = start_redeploy(TRIGGER, sfn=sfn, state_machine_arn=machine)
    second = start_redeploy(TRIGGER, sfn=sfn, state_machine_arn=machine)
    # Then one execution exists: StartExecution with the same name and input returned the running one
    executions = sfn.list_executions(stateMachineArn=machine)["executions"]
    assert [e["name"] for e in executions] == [execution_name(TRIGGER)]
    assert second.execution_arn == first.execution_arn == executions[0]["executionArn"]
    # And once it has ended, a late re-delivery is refused by name and reported as a duplicate
    sfn.stop_execution(executionArn=first.execution_arn)
    late = start_redeploy(TRIGGER, sfn=sfn, state_machine_arn=machine)
    assert (first.duplicate, late.duplicate) == (False, True)
    assert late.execution_arn == first.execution_arn
    assert len(sfn.list_executions(stateMachineArn=machine)["executions"]) == 1


def test_the_start_redeploy_handler_starts_the_pipeline_named_for_the_upload(
    aws: Aws, monkeypatch: pytest.MonkeyPatch, synth: Synthesized
) -> None:
    import lambdas.clients
    from lambdas.start_redeploy import handler
    from workflows.local.lambda_seam import LocalLambdaContext
    from workflows.redeploy.triggers import STATE_MACHINE_ENV

    # Given the function's environment as the stack sets it, and the input the rule's transformer makes
    sfn = boto3.client("stepfunctions", region_name=REGION)
    machine = waiting_machine(sfn)
    monkeypatch.setenv(STATE_MACHINE_ENV, machine)
    from lambdas.observability import metrics

    monkeypatch.setattr(metrics, "namespace", "deploybench")
    transformer = rule_target(synth)[1]["InputTransformer"]
    event = transform(OBJECT_CREATED, transformer["InputPathsMap"], transformer["InputTemplate"])
    context = LocalLambdaContext(
        "deploybench-start-redeploy", "arn:aws:lambda:us-east-1:1:function:x", 256, 30
    )
    lambdas.clients.clear()
    try:
        # When the handler runs twice (a re-delivered event)
        first, second = handler(event, context), handler(event, context)
    finally:
        lambdas.clients.clear()
    # Then one execution, named for the upload, runs with the event's fields as its input
    [execution] = sfn.list_executions(stateMachineArn=machine)["executions"]
    assert (
        execution["name"]
        == first["name"]
        == second["name"]
        == execution_name(RedeployTrigger.model_validate(event))
    )
    started = json.loads(sfn.describe_execution(executionArn=execution["executionArn"])["input"])
    assert RedeployTrigger.model_validate(started).version_id == "IYV3p45BT0ac8hjHg1houSdS1a.Mc8cs"
