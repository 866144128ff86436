"""The redeploy pipeline's steps: the queue that keeps uploads of one model from racing, and the
preparation that reads the spec at its version and snapshots the model beside it."""

from __future__ import annotations

import re
from typing import Any

import boto3
import pytest
import yaml

from tests.support.aws import Aws
from tests.support.triggers import BUCKET, REGION, TRIGGER, aws_bucket, waiting_machine
from workflows.errors import ModelSourceInvalid, SpecInvalid
from workflows.redeploy.prepare import PrepareRequest, QueueRequest, check_queue, prepare_redeploy
from workflows.redeploy.triggers import RedeployTrigger, execution_group, execution_name, start_redeploy
from workflows.settings import Settings

__all__ = ["aws_bucket"]


def queue(sfn: Any, machine: str, trigger: RedeployTrigger) -> Any:
    arn = start_redeploy(trigger, sfn=sfn, state_machine_arn=machine).execution_arn
    return check_queue(
        QueueRequest(
            state_machine_arn=machine,
            execution_arn=arn,
            group=execution_group(trigger.bucket, trigger.key),
            sequencer=trigger.sequencer,
            poll_s=60,
        ),
        sfn=sfn,
    )


def version(n: int, key: str = TRIGGER.key, sequencer: str | None = None) -> RedeployTrigger:
    return TRIGGER.model_copy(
        update={
            "key": key,
            "version_id": f"v{n}",
            "sequencer": sequencer if sequencer is not None else f"{n:04X}",
        }
    )


def test_a_lone_upload_proceeds_and_another_models_upload_does_not_block_it(aws: Aws) -> None:
    sfn = boto3.client("stepfunctions", region_name=REGION)
    machine = waiting_machine(sfn)
    start_redeploy(version(1, key="models/bert/deploybench.yaml"), sfn=sfn, state_machine_arn=machine)
    decision = queue(sfn, machine, version(2))
    assert (decision.decision, decision.older, decision.newer) == ("proceed", [], [])


def test_a_later_upload_waits_and_an_earlier_waiting_one_is_superseded(aws: Aws) -> None:
    sfn = boto3.client("stepfunctions", region_name=REGION)
    machine = waiting_machine(sfn)
    # Given v1 running
    assert queue(sfn, machine, version(1)).decision == "proceed"
    # When v2 arrives it waits for v1
    v2 = queue(sfn, machine, version(2))
    assert (v2.decision, v2.wait_s, v2.older) == ("wait", 60, [execution_name(version(1))])
    # And when v3 arrives it waits too; v2, checking again, is superseded by v3
    assert queue(sfn, machine, version(3)).decision == "wait"
    again = check_queue(
        QueueRequest(
            state_machine_arn=machine,
            execution_arn=machine.replace(":stateMachine:", ":execution:") + f":{execution_name(version(2))}",
            group=execution_group(BUCKET, TRIGGER.key),
            sequencer=version(2).sequencer,
        ),
        sfn=sfn,
    )
    assert (again.decision, again.newer) == ("superseded", [execution_name(version(3))])


def test_sequencers_order_uploads_not_arrival(aws: Aws) -> None:
    sfn = boto3.client("stepfunctions", region_name=REGION)
    machine = waiting_machine(sfn)
    # Given the later upload's event delivered first (S3 does not promise order across events)
    start_redeploy(version(2, sequencer="00617F0829934C3D0C"), sfn=sfn, state_machine_arn=machine)
    # When the earlier upload's event arrives after it
    decision = queue(sfn, machine, version(1, sequencer="00617F08299329D189"))
    # Then the earlier upload is the superseded one
    assert decision.decision == "superseded"


@pytest.fixture
def bucket(aws: Aws) -> Any:
    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket=BUCKET)
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        s3.put_object(Bucket=BUCKET, Key=f"models/minilm/{name}", Body=name.encode())
    return s3


SETTINGS = Settings(bucket=BUCKET, sagemaker_role_arn="arn:aws:iam::123456789012:role/sm")


def upload_spec(
    s3: Any, spec: dict[str, Any], key: str = "models/minilm/deploybench.yaml"
) -> RedeployTrigger:
    response = s3.put_object(Bucket=BUCKET, Key=key, Body=yaml.safe_dump(spec).encode())
    return RedeployTrigger(
        bucket=BUCKET,
        key=key,
        version_id=response["VersionId"],
        etag=response["ETag"].strip('"'),
        size=1,
        sequencer="01",
    )


def test_prepare_reads_the_spec_at_its_version_and_snapshots_the_model(bucket: Any) -> None:
    # Given two versions of the spec, the second uploaded after the first was announced
    first = upload_spec(bucket, {"name": "minilm", "benchmark": {"batch_sizes": [1]}})
    upload_spec(bucket, {"name": "minilm", "benchmark": {"batch_sizes": [64]}})
    # When the first upload is prepared
    plan = prepare_redeploy(
        PrepareRequest(trigger=first, execution_name=execution_name(first)), s3=bucket, settings=SETTINGS
    )
    # Then it runs the first version's spec, on a snapshot of the model files beside it (not the spec)
    assert plan.pipeline.spec.benchmark.batch_sizes == [1]
    run_id = plan.pipeline.run_id
    assert run_id.startswith("minilm-") and run_id.endswith(execution_name(first)[-8:])
    assert plan.source_uri == f"s3://{BUCKET}/sources/{run_id}/" == plan.pipeline.spec.model.source
    copied = {
        o["Key"] for o in bucket.list_objects_v2(Bucket=BUCKET, Prefix=f"sources/{run_id}/")["Contents"]
    }
    assert copied == {f"sources/{run_id}/{n}" for n in ("config.json", "model.safetensors", "tokenizer.json")}
    # And preparing it again (a retried step) names the same run
    again = prepare_redeploy(
        PrepareRequest(trigger=first, execution_name=execution_name(first)), s3=bucket, settings=SETTINGS
    )
    assert again.pipeline.run_id == run_id


def test_a_spec_naming_its_source_is_not_snapshotted(bucket: Any) -> None:
    trigger = upload_spec(bucket, {"name": "minilm", "model": {"source": "s3://elsewhere/minilm/"}})
    plan = prepare_redeploy(
        PrepareRequest(trigger=trigger, execution_name="x" * 12), s3=bucket, settings=SETTINGS
    )
    assert plan.pipeline.spec.model.source == "s3://elsewhere/minilm/"
    assert "Contents" not in bucket.list_objects_v2(Bucket=BUCKET, Prefix="sources/")


@pytest.mark.parametrize(
    ("body", "key", "error", "text"),
    [
        (b"name: [unclosed", "models/minilm/deploybench.yaml", SpecInvalid, "not a YAML run spec"),
        (b"name: Not Valid", "models/minilm/deploybench.yaml", SpecInvalid, "name"),
        (b"name: minilm", "models/minilm/other.yaml", SpecInvalid, "is not a model's run spec"),
        (b"name: lonely", "models/lonely/deploybench.yaml", ModelSourceInvalid, "holds no model files"),
    ],
)
def test_prepare_refuses_bad_uploads_clearly_and_creates_nothing(
    bucket: Any, body: bytes, key: str, error: type[Exception], text: str
) -> None:
    response = bucket.put_object(Bucket=BUCKET, Key=key, Body=body)
    trigger = RedeployTrigger(bucket=BUCKET, key=key, version_id=response["VersionId"])
    with pytest.raises(error, match=re.escape(text)):
        prepare_redeploy(
            PrepareRequest(trigger=trigger, execution_name="x" * 12), s3=bucket, settings=SETTINGS
        )
    assert "Contents" not in bucket.list_objects_v2(Bucket=BUCKET, Prefix="sources/")
