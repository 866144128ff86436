"""State-machine path test: a 2-run benchmark sweep on the local engine, one run healthy, one stalled (F06)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from tests.conftest import fast_spec, serving_processes
from workflows.local.engine import BUCKET, LocalEngine
from workflows.local.faults import Fault, FaultPlan
from workflows.runner import follow
from workflows.sweeps.spec import parse_sweep

TIME_SCALE = 200.0
HEALTHY, STALLED = "ml.c6i.xlarge", "ml.c6i.2xlarge"


def sweep_input(model: Path) -> dict[str, object]:
    base = fast_spec(model, wait={"stall_threshold_min": 5}).model_dump(mode="json")
    base.pop("name")
    sweep = parse_sweep({"name": "tiny", "base": base, "matrix": {"instance_types": [HEALTHY, STALLED]}})
    return {"sweep": sweep.model_dump(mode="json")}


def test_sweep_runs_each_item_as_a_child_pipeline_and_reports_the_failed_one(
    tiny_bert: Path, tmp_path: Path
) -> None:
    # Given a sweep over two instance types, the second with no capacity (F06)
    plan = FaultPlan(faults=[Fault(id="F06", instance_types=[STALLED], stall_minutes=20)])
    with LocalEngine(workdir=tmp_path / "engine", time_scale=TIME_SCALE, fault_plan=plan) as engine:
        sfn, s3 = engine.client("stepfunctions"), engine.client("s3")
        # When the sweep runs (the same definition the stack deploys)
        arn = engine.start_execution("benchmark_sweep", sweep_input(tiny_bert), name="sweep-1")
        outcome = follow(sfn, arn, poll_s=0.2, timeout_s=900)
        children = sfn.list_executions(stateMachineArn=engine.state_machine_arns["deploy_pipeline"])[
            "executions"
        ]
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="sweeps/tiny/")["Contents"]]
        summary_key = next(k for k in keys if k.endswith("/summary.json"))
        summary = json.loads(s3.get_object(Bucket=BUCKET, Key=summary_key)["Body"].read())
        endpoints_left = dict(engine.sagemaker.endpoints) if engine.sagemaker else {"?": None}
    # Then the sweep planned, ran both items, compared, and failed because a run failed
    assert outcome.status == "FAILED"
    assert outcome.error == "SweepRunsFailed"
    assert "1 of 2 runs failed" in (outcome.cause or "")
    # The Map's two iterations interleave (order between them varies); before and after it, order is fixed
    assert outcome.states[:2] == ["PlanSweep", "RunMatrix"]
    assert Counter(outcome.states[2:-3]) == Counter(
        {"RunDeployPipeline": 2, "RecordRun": 1, "RecordFailedRun": 1}
    )
    assert outcome.states[-3:] == ["CompareWithBaseline", "IsSweepClean", "ReportFailedRuns"]
    # And each item was a child deploy pipeline named by its run id
    sweep_id = summary["sweep_id"]
    assert sorted((c["name"], c["status"]) for c in children) == [
        (f"{sweep_id}-0", "SUCCEEDED"),
        (f"{sweep_id}-1", "FAILED"),
    ]
    # And the report has the healthy run's figures and the failed run's diagnosis
    runs = {r["run_id"]: r for r in summary["runs"]}
    assert runs[f"{sweep_id}-0"]["status"] == "SUCCEEDED"
    assert {(s["batch_size"], s["sequence_length"]) for s in runs[f"{sweep_id}-0"]["shapes"]} == {
        (1, "natural"),
        (2, "natural"),
        (1, 16),
        (2, 16),
    }
    assert runs[f"{sweep_id}-1"]["error"].startswith("CapacityStall (F06)")
    assert summary["comparison"]["verdict"] == "no_baseline"
    assert f"sweeps/tiny/{sweep_id}/report.md" in keys
    # And a sweep with a failed run does not become the baseline
    assert "sweeps/tiny/baseline.json" not in keys
    # And nothing is left running
    assert endpoints_left == {}
    assert engine.leaked_endpoints == []
    assert serving_processes() == []
