"""The sweep and redeploy handlers, called as Lambda calls them, on moto's S3 and Step Functions."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from lambdas import (
    check_redeploy_queue,
    compare_with_baseline,
    plan_sweep,
    read_uploaded_spec,
    start_redeploy,
    write_report,
)
from tests.support.aws import Aws
from tests.support.handlers import invoke
from tests.support.triggers import BUCKET, waiting_machine
from workflows.contracts import ErrorInfo, PipelineState, ReportRequest
from workflows.redeploy.prepare import PrepareRequest, QueueRequest, RedeployPlan
from workflows.redeploy.triggers import STATE_MACHINE_ENV, RedeployTrigger, execution_group, execution_name
from workflows.sweeps.plan import PlanRequest, SweepPlan
from workflows.sweeps.report import CompareRequest, RunOutcome
from workflows.sweeps.spec import parse_sweep

SWEEP = {
    "name": "nightly",
    "base": {"model": {"task": "embedding"}, "benchmark": {"min_requests": 5}},
    "matrix": {"instance_types": ["ml.c6i.xlarge", "ml.c7i.xlarge"]},
}
SPEC_KEY = "models/minilm/deploybench.yaml"


@pytest.fixture
def aws_bucket() -> str:
    return BUCKET


@pytest.fixture
def versioned(aws: Aws) -> Aws:
    """The stack's bucket as deployed (versioned), with a model folder uploaded beside its spec."""
    aws.s3.put_bucket_versioning(Bucket=aws.bucket, VersioningConfiguration={"Status": "Enabled"})
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        aws.s3.put_object(Bucket=aws.bucket, Key=f"models/minilm/{name}", Body=name.encode())
    return aws


def uploaded(aws: Aws, spec: dict[str, Any], sequencer: str) -> RedeployTrigger:
    """The redeploy pipeline's input for one upload of the spec (what the rule's transformer makes)."""
    response = aws.s3.put_object(Bucket=aws.bucket, Key=SPEC_KEY, Body=yaml.safe_dump(spec).encode())
    return RedeployTrigger(
        bucket=aws.bucket,
        key=SPEC_KEY,
        version_id=response["VersionId"],
        etag=response["ETag"].strip('"'),
        size=1,
        sequencer=sequencer,
    )


def test_plan_sweep_expands_the_matrix_into_one_pipeline_input_per_run(aws: Aws) -> None:
    # When PlanSweep expands a sweep over two instance types
    plan = SweepPlan.model_validate(
        invoke(plan_sweep, PlanRequest(sweep=parse_sweep(SWEEP), execution_name="exec-1"))
    )
    # Then each run is a complete pipeline input named after the sweep
    types = [item.pipeline.spec.hosting.instance_type_fallbacks[0] for item in plan.items]
    assert types == ["ml.c6i.xlarge", "ml.c7i.xlarge"]
    assert [item.pipeline.run_id for item in plan.items] == [f"{plan.sweep_id}-{n}" for n in range(2)]


def test_compare_with_baseline_reports_a_failed_run_with_its_error(aws: Aws) -> None:
    # Given a planned sweep whose first run failed in its wait loop and wrote its failure report
    sweep = parse_sweep(SWEEP)
    plan = SweepPlan.model_validate(invoke(plan_sweep, PlanRequest(sweep=sweep, execution_name="exec-2")))
    run = plan.items[0].pipeline
    failed = run.model_copy(
        update={"error": ErrorInfo(Error="CapacityStall", Cause="no capacity for ml.c6i.xlarge")}
    )
    invoke(
        write_report, ReportRequest(state=PipelineState.model_validate(failed.model_dump()), status="FAILED")
    )
    outcomes = [
        RunOutcome(
            index=item.index,
            key=item.key,
            run_id=item.pipeline.run_id,
            status="FAILED",
            error="States.TaskFailed",
        )
        for item in plan.items
    ]
    # When CompareWithBaseline gathers the sweep
    result = invoke(compare_with_baseline, CompareRequest(sweep=sweep, sweep_id=plan.sweep_id, runs=outcomes))
    # Then both runs are reported failed, the first with its error, the second without a result
    assert (result["failed_count"], result["failed_runs"]) == (2, [i.pipeline.run_id for i in plan.items])
    assert "CapacityStall" in result["summary"] and "no result.json" in result["summary"]
    summary = aws.s3.get_object(Bucket=aws.bucket, Key=f"sweeps/nightly/{plan.sweep_id}/summary.json")
    assert json.loads(summary["Body"].read())["comparison"]["shapes"] == []


def test_read_uploaded_spec_reads_its_version_and_snapshots_the_model(versioned: Aws) -> None:
    # Given two versions of the spec, the first announced
    first = uploaded(versioned, {"name": "minilm", "benchmark": {"batch_sizes": [1]}}, "01")
    uploaded(versioned, {"name": "minilm", "benchmark": {"batch_sizes": [64]}}, "02")
    # When ReadUploadedSpec prepares the first
    plan = RedeployPlan.model_validate(
        invoke(read_uploaded_spec, PrepareRequest(trigger=first, execution_name=execution_name(first)))
    )
    # Then it runs that version, on a copy of the model files under the run's sources/ prefix
    run_id = plan.pipeline.run_id
    assert plan.pipeline.spec.benchmark.batch_sizes == [1]
    assert plan.source_uri == f"s3://{versioned.bucket}/sources/{run_id}/" == plan.pipeline.spec.model.source
    listed = versioned.s3.list_objects_v2(Bucket=versioned.bucket, Prefix=f"sources/{run_id}/")["Contents"]
    assert {o["Key"].rpartition("/")[2] for o in listed} == {
        "config.json",
        "model.safetensors",
        "tokenizer.json",
    }


def test_check_redeploy_queue_lets_the_older_upload_run_first(
    versioned: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the redeploy pipeline, and two uploads of one model (StartRedeploy starts each)
    machine = waiting_machine(versioned.sfn)
    monkeypatch.setenv(STATE_MACHINE_ENV, machine)
    v1 = uploaded(versioned, {"name": "minilm"}, "0001")
    v2 = uploaded(versioned, {"name": "minilm"}, "0002")

    def queued(trigger: RedeployTrigger) -> tuple[dict[str, Any], dict[str, Any]]:
        started = invoke(start_redeploy, trigger)
        event = QueueRequest(
            state_machine_arn=machine,
            execution_arn=started["execution_arn"],
            group=execution_group(trigger.bucket, trigger.key),
            sequencer=trigger.sequencer,
            poll_s=60,
        )
        return started, invoke(check_redeploy_queue, event)

    # When v1 is started and asks CheckRedeployQueue, then v2 while v1 still runs
    (v1_started, first), (_, second) = queued(v1), queued(v2)
    # Then v1 proceeds and v2 waits for it
    assert first["decision"] == "proceed"
    assert (second["decision"], second["wait_s"]) == ("wait", 60)
    assert second["older"] == [v1_started["name"]]
