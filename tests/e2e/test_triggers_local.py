"""State-machine path test: three uploads of one model's spec on the local engine; one version at a time,
the waiting middle one superseded, the newest deployed after the first."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import fast_spec, serving_processes
from workflows.aws.storage import upload_folder
from workflows.execution.pipeline import ExecutionOutcome, follow
from workflows.local.engine import BUCKET, LocalEngine
from workflows.redeploy.triggers import RedeployTrigger, StartOutcome, start_redeploy

TIME_SCALE = 200.0
SPEC_KEY = "models/tiny/deploybench.yaml"


def upload_spec(s3: Any, model: Path, sequence: int) -> RedeployTrigger:
    """A new version of the model's run spec, as the S3 rule's input transformer would announce it."""
    spec = fast_spec(model, name="tiny").model_dump(mode="json")
    spec["model"].pop("source")  # the model folder beside the spec is the source
    response = s3.put_object(Bucket=BUCKET, Key=SPEC_KEY, Body=yaml.safe_dump(spec).encode())
    return RedeployTrigger(
        bucket=BUCKET,
        key=SPEC_KEY,
        version_id=response["VersionId"],
        etag=response["ETag"].strip('"'),
        size=1,
        sequencer=f"{sequence:018X}",
    )


def entered(sfn: Any, arn: str) -> list[str]:
    events = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    return [e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e]


def wait_for(condition: Callable[[], bool], what: str, deadline_s: float = 300) -> None:
    deadline = time.monotonic() + deadline_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_uploads_of_one_model_redeploy_one_at_a_time_and_the_latest_wins(
    tiny_bert: Path, tmp_path: Path
) -> None:
    with LocalEngine(workdir=tmp_path / "engine", time_scale=TIME_SCALE) as engine:
        sfn, s3 = engine.client("stepfunctions"), engine.client("s3")
        machine = engine.state_machine_arns["redeploy_pipeline"]
        s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        upload_folder(s3, tiny_bert, f"s3://{BUCKET}/models/tiny/")

        def start(trigger: RedeployTrigger) -> StartOutcome:
            return start_redeploy(trigger, sfn=sfn, state_machine_arn=machine)

        # Given v1 uploaded and deploying
        v1 = start(upload_spec(s3, tiny_bert, 1))
        wait_for(lambda: "RunDeployPipeline" in entered(sfn, v1.execution_arn), "v1 to deploy")
        # When v2 is uploaded it waits for v1
        v2 = start(upload_spec(s3, tiny_bert, 2))
        wait_for(lambda: "WaitForPreviousRedeploy" in entered(sfn, v2.execution_arn), "v2 to wait")
        # And when v3 is uploaded (and its event delivered twice) while v2 still waits
        trigger3 = upload_spec(s3, tiny_bert, 3)
        v3, v3_again = start(trigger3), start(trigger3)
        outcomes: dict[str, ExecutionOutcome] = {
            name: follow(sfn, o.execution_arn, poll_s=0.2, timeout_s=600)
            for name, o in (("v1", v1), ("v2", v2), ("v3", v3))
        }
        children = sfn.list_executions(stateMachineArn=engine.state_machine_arns["deploy_pipeline"])[
            "executions"
        ]
        redeploys = sfn.list_executions(stateMachineArn=machine)["executions"]
        endpoints_left = dict(engine.sagemaker.endpoints) if engine.sagemaker else {"?": None}
    # Then every redeploy succeeded, and the duplicate delivery started nothing
    assert {name: o.status for name, o in outcomes.items()} == {
        "v1": "SUCCEEDED",
        "v2": "SUCCEEDED",
        "v3": "SUCCEEDED",
    }
    assert v3_again.execution_arn == v3.execution_arn and len(redeploys) == 3
    # v1 deployed at once
    assert outcomes["v1"].states == [
        "ReadUploadedSpec",
        "CheckRedeployQueue",
        "IsItThisVersionsTurn",
        "RunDeployPipeline",
        "RedeploySucceeded",
    ]
    # v2 waited behind v1, then saw v3 and stood down without deploying
    assert outcomes["v2"].states[:5] == [
        "ReadUploadedSpec",
        "CheckRedeployQueue",
        "IsItThisVersionsTurn",
        "WaitForPreviousRedeploy",
        "CheckRedeployQueue",
    ]
    assert outcomes["v2"].states[-2:] == ["IsItThisVersionsTurn", "SkipSupersededVersion"]
    assert "RunDeployPipeline" not in outcomes["v2"].states
    # v3 waited until v1's deploy pipeline had ended, then deployed
    assert "WaitForPreviousRedeploy" in outcomes["v3"].states
    assert outcomes["v3"].states[-2:] == ["RunDeployPipeline", "RedeploySucceeded"]
    # So exactly two deploy pipelines ran (v1's and v3's), one after the other
    assert len(children) == 2 and all(c["status"] == "SUCCEEDED" for c in children)
    first, second = sorted(children, key=lambda c: c["startDate"])
    assert first["stopDate"] <= second["startDate"]
    assert endpoints_left == {}
    assert serving_processes() == []
