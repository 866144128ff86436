"""A StopExecution of a running local pipeline tears its run down through the stack's rule, not the janitor."""

from __future__ import annotations

import time
from pathlib import Path

from tests.conftest import fast_spec, serving_processes
from tests.support.local_pipeline import TIME_SCALE
from workflows.cli.stop import stop_and_wait
from workflows.contracts import PipelineState
from workflows.execution.pipeline import Follower, _history
from workflows.local.engine import BUCKET, LocalEngine


def test_stop_execution_of_a_running_pipeline_deletes_its_endpoint(tiny_bert: Path, tmp_path: Path) -> None:
    # Given a deploy pipeline running on the local engine, its endpoint serving (warm-up entered)
    state = PipelineState(run_id="stopped-1", spec=fast_spec(tiny_bert))
    with LocalEngine(workdir=tmp_path / "engine", time_scale=TIME_SCALE, serving="light") as engine:
        sfn = engine.client("stepfunctions")
        arn = engine.start_execution("deploy_pipeline", state.model_dump(mode="json"), name=state.run_id)
        follower = Follower()
        deadline = time.monotonic() + 240
        while "WarmUpShapes" not in follower.states and time.monotonic() < deadline:
            follower.feed(_history(sfn, arn))
            time.sleep(0.2)
        assert "WarmUpShapes" in follower.states, follower.states
        endpoint = f"db-{state.run_id}-a1"
        sagemaker = engine.client("sagemaker")
        assert [e["EndpointName"] for e in sagemaker.list_endpoints()["Endpoints"]] == [endpoint]
        # When `deploybench stop` stops it and waits for the teardown
        before, record = stop_and_wait(
            sfn, engine.client("s3"), bucket=BUCKET, execution_arn=arn, timeout_s=120, poll_s=0.2
        )
        # Then the execution was running and is ABORTED, and the rule's teardown removed the endpoint
        assert before == "RUNNING"
        assert sfn.describe_execution(executionArn=arn)["status"] == "ABORTED"
        assert record is not None and record.teardown is not None, record
        assert f"endpoint/{endpoint}" in record.teardown.deleted and record.teardown.remaining == []
        # And nothing of the run is left while the engine still runs (no shutdown, no janitor)
        assert sagemaker.list_endpoints()["Endpoints"] == []
        assert engine.sagemaker is not None and engine.sagemaker.running_containers() == []
        assert engine.events is not None
        [delivery] = [
            d for d in engine.events.deliveries if d.function_name.endswith("teardown-stopped-execution")
        ]
        assert delivery.error is None and delivery.event["detail"]["status"] == "ABORTED"
        # And a second stop finds it already stopped, with the same record
        again, same = stop_and_wait(sfn, engine.client("s3"), bucket=BUCKET, execution_arn=arn, timeout_s=5)
        assert again == "ABORTED" and same == record
    assert serving_processes() == []
