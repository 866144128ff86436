"""Benchmark sweeps: the matrix, the plan, the comparison with the baseline, the report in S3."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from moto import mock_aws

from workflows.contracts import ShapeStats
from workflows.errors import SpecInvalid
from workflows.settings import Settings
from workflows.sweeps.compare import RunSummary, compare_runs
from workflows.sweeps.plan import PlanRequest, plan_sweep
from workflows.sweeps.report import CompareRequest, RunOutcome, compare_sweep
from workflows.sweeps.spec import MAX_RUNS, RegressionThresholds, load_sweep, parse_sweep

BASE = {"model": {"task": "embedding"}, "benchmark": {"min_requests": 5}}


def sweep_data(**matrix: Any) -> dict[str, Any]:
    return {"name": "nightly", "base": BASE, "matrix": matrix}


def test_the_matrix_expands_to_every_combination_of_its_axes() -> None:
    # Given 2 models x 1 mode x 2 instance types x 2 shape groups
    sweep = parse_sweep(
        sweep_data(
            models=[{"source": "bundled"}, {"source": "s3://bucket/bert/"}],
            hosting=[{"mode": "realtime", "workers": 1}],
            instance_types=["ml.c6i.xlarge", "ml.c7i.xlarge"],
            shapes=[{"batch_sizes": [1]}, {"batch_sizes": [8], "sequence_lengths": [128]}],
        )
    )
    # When it is planned
    plan = plan_sweep(
        PlanRequest(sweep=sweep, execution_name="exec-1"), now=datetime(2026, 11, 2, 3, 0, tzinfo=UTC)
    )
    # Then there is one run per combination, each a complete spec with its coordinates
    assert len(plan.items) == 8
    specs = [item.pipeline.spec for item in plan.items]
    assert {(s.model.source, s.hosting.instance_types[0], tuple(s.benchmark.batch_sizes)) for s in specs} == {
        (m, t, b)
        for m in ("bundled", "s3://bucket/bert/")
        for t in ("ml.c6i.xlarge", "ml.c7i.xlarge")
        for b in ((1,), (8,))
    }
    assert all(s.name == "nightly" and s.benchmark.min_requests == 5 for s in specs)
    # And run ids derive from the sweep id (a child execution is named by its run id)
    assert plan.sweep_id.startswith("nightly-20261102-030000-")
    assert [i.pipeline.run_id for i in plan.items] == [f"{plan.sweep_id}-{n}" for n in range(8)]
    assert len({i.key for i in plan.items}) == 8


def test_a_retried_plan_names_the_same_runs() -> None:
    sweep = parse_sweep(sweep_data(instance_types=["ml.c6i.xlarge"]))
    now = datetime(2026, 11, 2, 3, 0, tzinfo=UTC)
    first = plan_sweep(PlanRequest(sweep=sweep, execution_name="exec-1"), now=now)
    assert first.sweep_id == plan_sweep(PlanRequest(sweep=sweep, execution_name="exec-1"), now=now).sweep_id
    assert first.sweep_id != plan_sweep(PlanRequest(sweep=sweep, execution_name="exec-2"), now=now).sweep_id


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (sweep_data(instance_types=["c6i.xlarge"]), "instance_type=c6i.xlarge"),
        (sweep_data(shapes=[{"batch_sizes": [0]}]), "batch_sizes"),
        (sweep_data(instance_types=["ml.c6i.xlarge", "ml.c6i.xlarge"]), "are the same run"),
        (
            sweep_data(models=[{"source": f"s3://b/m{i}/"} for i in range(MAX_RUNS + 1)]),
            f"at most {MAX_RUNS}",
        ),
        ({"name": "nightly", "base": {"name": "x"}}, "base.name"),
        ({"name": "nightly", "matrix": {"modes": []}}, "matrix.modes"),
    ],
)
def test_a_bad_sweep_is_refused_naming_the_problem(data: dict[str, Any], text: str) -> None:
    with pytest.raises(SpecInvalid, match=text.replace("[", r"\[").replace(".", r"\.")):
        parse_sweep(data)


def test_the_example_sweep_is_valid() -> None:
    sweep = load_sweep("examples/sweep-nightly.yaml")
    assert sweep.name == "nightly"


def shape(
    batch: int, p50: float, p99: float, rate: float, *, stable: bool = True, requests: int = 100
) -> ShapeStats:
    return ShapeStats(
        batch_size=batch,
        sequence_length="natural",
        requests=requests,
        errors=0,
        duration_s=5.0,
        p50_ms=p50,
        p90_ms=p50 * 1.2,
        p99_ms=p99,
        max_ms=p99 * 1.1,
        mean_ms=p50,
        std_ms=0.5,
        samples_per_s=rate,
        requests_per_s=rate / batch,
        stable=stable,
    )


def run(key: str, *shapes: ShapeStats, status: str = "SUCCEEDED") -> RunSummary:
    return RunSummary(index=0, key=key, run_id=f"r-{key}", status=status, shapes=list(shapes))  # type: ignore[arg-type]


THRESHOLDS = RegressionThresholds(p50_pct=10, p99_pct=25, throughput_pct=10, min_requests=30)


def test_no_baseline_gives_no_verdict_on_shapes() -> None:
    result = compare_runs([run("a", shape(1, 10, 20, 100))], None, THRESHOLDS)
    assert (result.verdict, result.shapes) == ("no_baseline", [])


@pytest.mark.parametrize(
    ("now", "verdict"),
    [
        (shape(1, 10.5, 21, 97), "same"),  # within every threshold
        (shape(1, 11.5, 20, 100), "regression"),  # p50 +15% > 10%
        (shape(1, 10, 26, 100), "regression"),  # p99 +30% > 25%
        (shape(1, 10, 20, 85), "regression"),  # samples/s -15% < -10%
        (shape(1, 8, 18, 120), "improvement"),
        (shape(1, 20, 40, 50, stable=False), "no_verdict"),  # not stable: no verdict, however bad
        (shape(1, 20, 40, 50, requests=10), "no_verdict"),  # too few requests
    ],
)
def test_each_shape_is_judged_against_the_thresholds(now: ShapeStats, verdict: str) -> None:
    result = compare_runs([run("a", now)], [run("a", shape(1, 10, 20, 100))], THRESHOLDS)
    assert [s.verdict for s in result.shapes] == [verdict]
    assert result.verdict == ("regression" if verdict == "regression" else "no_regression")


def test_only_runs_and_shapes_in_both_sweeps_are_compared() -> None:
    baseline = [run("a", shape(1, 10, 20, 100), shape(8, 40, 80, 200)), run("gone", shape(1, 1, 1, 1))]
    current = [
        run("a", shape(1, 10, 20, 100), shape(32, 90, 99, 300)),
        run("new", shape(1, 1, 1, 1)),
        run("x", status="FAILED"),
    ]
    result = compare_runs(current, baseline, THRESHOLDS)
    assert [(s.key, s.batch_size) for s in result.shapes] == [("a", 1)]
    assert (result.new_runs, result.dropped_runs) == (["new"], ["gone"])


SETTINGS = Settings(bucket="sweep-bucket", sagemaker_role_arn="arn:aws:iam::123456789012:role/sm")


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=SETTINGS.bucket)
        yield client


def put_result(
    s3: Any, run_id: str, status: str, shapes: list[ShapeStats], error: dict[str, str] | None = None
) -> None:
    result = {
        "status": status,
        "benchmark": {"shapes": [s.model_dump(mode="json") for s in shapes], "seconds": 1.0},
    }
    if error:
        result |= {"error": error, "diagnosis": {"id": "F06"}}
    s3.put_object(
        Bucket=SETTINGS.bucket, Key=f"results/{run_id}/result.json", Body=json.dumps(result).encode()
    )


def request(sweep_id: str, *outcomes: RunOutcome) -> CompareRequest:
    sweep = parse_sweep({"name": "nightly", "base": BASE, "regression": {"min_requests": 30}})
    return CompareRequest(sweep=sweep, sweep_id=sweep_id, runs=list(outcomes))


def baseline(s3: Any) -> dict[str, Any] | None:
    try:
        return dict(
            json.loads(
                s3.get_object(Bucket=SETTINGS.bucket, Key="sweeps/nightly/baseline.json")["Body"].read()
            )
        )
    except s3.exceptions.NoSuchKey:
        return None


def test_a_clean_sweep_becomes_the_baseline_and_a_regression_does_not(s3: Any) -> None:
    # Given a first sweep with no baseline
    put_result(s3, "s1-0", "SUCCEEDED", [shape(1, 10, 20, 100)])
    first = compare_sweep(
        request("s1", RunOutcome(index=0, key="k", run_id="s1-0", status="SUCCEEDED")),
        s3=s3,
        settings=SETTINGS,
    )
    # Then it reports no baseline and becomes the baseline
    assert (first.verdict, first.failed_count) == ("no_baseline", 0)
    assert baseline(s3)["sweep_id"] == "s1"  # type: ignore[index]
    # When the next sweep is 50 % slower at p50
    put_result(s3, "s2-0", "SUCCEEDED", [shape(1, 15, 20, 100)])
    second = compare_sweep(
        request("s2", RunOutcome(index=0, key="k", run_id="s2-0", status="SUCCEEDED")),
        s3=s3,
        settings=SETTINGS,
    )
    # Then it is a regression against s1, reported, and the baseline stays s1
    assert (second.verdict, second.baseline_sweep_id, second.regressions) == ("regression", "s1", 1)
    assert "p50 +50.0%" in second.summary
    assert baseline(s3)["sweep_id"] == "s1"  # type: ignore[index]
    report = s3.get_object(Bucket=SETTINGS.bucket, Key="sweeps/nightly/s2/report.md")["Body"].read().decode()
    assert "regression" in report and "s2-0" in report
    summary = json.loads(
        s3.get_object(Bucket=SETTINGS.bucket, Key="sweeps/nightly/s2/summary.json")["Body"].read()
    )
    assert summary["comparison"]["shapes"][0]["change_pct"]["p50_ms"] == 50.0


def test_failed_runs_are_reported_with_their_diagnosis_and_keep_the_baseline(s3: Any) -> None:
    put_result(
        s3, "s1-0", "FAILED", [], error={"Error": "CapacityStall", "Cause": "no capacity for ml.g5.xlarge"}
    )
    outcome = compare_sweep(
        request(
            "s1",
            RunOutcome(index=0, key="k", run_id="s1-0", status="FAILED", error="States.TaskFailed"),
            RunOutcome(index=1, key="j", run_id="s1-1", status="FAILED", error="States.TaskFailed"),
        ),
        s3=s3,
        settings=SETTINGS,
    )
    assert (outcome.failed_count, outcome.failed_runs) == (2, ["s1-0", "s1-1"])
    assert "CapacityStall (F06): no capacity" in outcome.summary
    assert "no result.json" in outcome.summary
    assert baseline(s3) is None


def test_the_input_command_prints_what_the_state_machines_take() -> None:
    from typer.testing import CliRunner

    from workflows.cli import app
    from workflows.contracts import PipelineState

    runner = CliRunner()
    run_input = runner.invoke(app, ["input", "examples/minilm-realtime.yaml"])
    sweep_input = runner.invoke(app, ["input", "examples/sweep-nightly.yaml", "--sweep"])
    assert run_input.exit_code == sweep_input.exit_code == 0
    # The deploy pipeline reads every key of its state ($.attempt, $.endpoint, ...) from the start
    state = json.loads(run_input.stdout)
    assert PipelineState.model_validate(state).run_id.startswith("minilm-realtime-")
    assert {"attempt", "endpoint", "deploy", "error"} <= set(state)
    assert parse_sweep(json.loads(sweep_input.stdout)["sweep"]).name == "nightly"
