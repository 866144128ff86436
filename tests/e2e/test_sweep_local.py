"""State-machine path test: a 2-run benchmark sweep on the local engine, one run healthy, one stalled
(F06), judged against a baseline sweep whose results are in the bucket."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fast_spec, serving_processes
from tests.support.result_docs import measurement, result
from workflows.execution.pipeline import follow
from workflows.local.engine import BUCKET, LocalEngine
from workflows.local.faults import Fault, FaultPlan
from workflows.sweeps.spec import SweepSpec, expand, parse_sweep

TIME_SCALE = 200.0
HEALTHY, STALLED = "ml.c6i.xlarge", "ml.c6i.2xlarge"


def tiny_sweep(model: Path) -> SweepSpec:
    base = fast_spec(model, wait={"stall_threshold_min": 5}).model_dump(mode="json")
    base.pop("name")
    return parse_sweep({"name": "tiny", "base": base, "matrix": {"instance_types": [HEALTHY, STALLED]}})


SHAPES = {(1, "natural"), (2, "natural"), (1, 16), (2, 16)}
# A baseline 200 times slower than the tiny model: nothing this sweep measures can regress against it.
BASELINE_P50_MS = 1000.0


def seed_baseline(s3: Any, sweep: SweepSpec) -> dict[str, str]:
    """A previous clean sweep: both keys with their result.json, and one key no longer swept."""
    healthy, stalled = (item.key for item in expand(sweep))
    runs = {healthy: "base-0", stalled: "base-1", "gone · realtime · ml.m5.xlarge": "base-2"}
    for run_id in runs.values():
        document = result(
            run_id,
            [measurement(BASELINE_P50_MS, batch=b, sequence=q, seed=b) for b, q in sorted(SHAPES, key=str)],
        )
        s3.put_object(Bucket=BUCKET, Key=f"results/{run_id}/result.json", Body=json.dumps(document).encode())
    summary = {
        "schema_version": 2,
        "sweep_id": "base",
        "name": "tiny",
        "runs": [
            {
                "index": index,
                "key": key,
                "run_id": run_id,
                "status": "SUCCEEDED",
                "result_uri": f"s3://{BUCKET}/results/{run_id}/result.json",
            }
            for index, (key, run_id) in enumerate(runs.items())
        ],
    }
    s3.put_object(Bucket=BUCKET, Key="sweeps/tiny/baseline.json", Body=json.dumps(summary).encode())
    return runs


def test_sweep_runs_each_item_as_a_child_pipeline_and_reports_the_failed_one(
    tiny_bert: Path, tmp_path: Path
) -> None:
    # Given a sweep over two instance types, the second with no capacity (F06)
    plan = FaultPlan(faults=[Fault(id="F06", instance_types=[STALLED], stall_minutes=20)])
    with LocalEngine(workdir=tmp_path / "engine", time_scale=TIME_SCALE, fault_plan=plan) as engine:
        sfn, s3 = engine.client("stepfunctions"), engine.client("s3")
        # And a baseline sweep that measured both runs, and one run no longer in the matrix
        sweep = tiny_sweep(tiny_bert)
        baseline_runs = seed_baseline(s3, sweep)
        # When the sweep runs (the same definition the stack deploys)
        arn = engine.start_execution(
            "benchmark_sweep", {"sweep": sweep.model_dump(mode="json")}, name="sweep-1"
        )
        outcome = follow(sfn, arn, poll_s=0.2, timeout_s=900)
        children = sfn.list_executions(stateMachineArn=engine.state_machine_arns["deploy_pipeline"])[
            "executions"
        ]
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="sweeps/tiny/")["Contents"]]
        summary_key = next(k for k in keys if k.endswith("/summary.json"))
        summary = json.loads(s3.get_object(Bucket=BUCKET, Key=summary_key)["Body"].read())
        baseline = json.loads(s3.get_object(Bucket=BUCKET, Key="sweeps/tiny/baseline.json")["Body"].read())
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
    # And the healthy run's result.json was judged shape by shape against the baseline run's; the
    # failed run was not compared, and the key no longer swept is listed as dropped
    comparison = summary["comparison"]
    assert (summary["baseline_sweep_id"], comparison["verdict"]) == ("base", "no_regression")
    compared = comparison["shapes"]
    assert {(s["batch_size"], s["sequence_length"]) for s in compared} == SHAPES
    assert {(s["run_id"], s["baseline_run_id"]) for s in compared} == {(f"{sweep_id}-0", "base-0")}
    for shape in compared:
        # a real brief measurement: faster than the baseline, or too few samples to say
        assert shape["verdict"] in {"improvement", "within noise", "no verdict"}
        assert shape["p50_ms"][0] == pytest.approx(BASELINE_P50_MS, rel=0.05)
        if shape["verdict"] == "no verdict":
            assert shape["latency"]["reason"].startswith("candidate")  # the seeded baseline has enough
        else:
            assert shape["latency"]["median_change"] < -0.9
    assert (comparison["unjudged"], comparison["new_runs"]) == ([], [])
    assert comparison["dropped_runs"] == ["gone · realtime · ml.m5.xlarge"]
    assert f"sweeps/tiny/{sweep_id}/report.md" in keys
    # And a sweep with a failed run does not become the baseline
    assert (baseline["sweep_id"], [r["run_id"] for r in baseline["runs"]]) == (
        "base",
        list(baseline_runs.values()),
    )
    # And nothing is left running
    assert endpoints_left == {}
    assert engine.leaked_endpoints == []
    assert serving_processes() == []
