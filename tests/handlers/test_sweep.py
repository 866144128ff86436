"""Benchmark sweeps: the matrix, the plan, the comparison with the baseline, the report in S3."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.support.aws import Aws
from tests.support.result_docs import measurement, result
from workflows.benchmark.results import ShapeStats
from workflows.errors import SpecInvalid
from workflows.settings import Settings
from workflows.sweeps.compare import RunSummary, compare_runs
from workflows.sweeps.plan import PlanRequest, plan_sweep
from workflows.sweeps.report import CompareRequest, RunOutcome, compare_sweep
from workflows.sweeps.spec import MAX_RUNS, load_sweep, parse_sweep

BASE = {"model": {"task": "embedding"}, "benchmark": {"min_requests": 5}}
SETTINGS = Settings(bucket="sweep-bucket", sagemaker_role_arn="arn:aws:iam::123456789012:role/sm")


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
    assert {
        (s.model.source, s.hosting.instance_type_fallbacks[0], tuple(s.benchmark.batch_sizes)) for s in specs
    } == {
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
        ({"name": "nightly", "regression": {"p50_pct": 10}}, "p50_pct no longer apply"),
        ({"name": "nightly", "regression": {"min_change_pct": -1}}, "min_change_pct"),
    ],
)
def test_a_bad_sweep_is_refused_naming_the_problem(data: dict[str, Any], text: str) -> None:
    with pytest.raises(SpecInvalid, match=text.replace("[", r"\[").replace(".", r"\.")):
        parse_sweep(data)


def test_the_example_sweep_is_valid() -> None:
    sweep = load_sweep("examples/sweep-nightly.yaml")
    assert (sweep.name, sweep.regression.min_change_pct) == ("nightly", 5)


def uri(run_id: str) -> str:
    return f"s3://{SETTINGS.bucket}/results/{run_id}/result.json"


def run(key: str, run_id: str, *, status: str = "SUCCEEDED", kept_result: bool = True) -> RunSummary:
    """A run as the summary keeps it: its result.json is read for the comparison."""
    return RunSummary(
        index=0,
        key=key,
        run_id=run_id,
        status=status,  # type: ignore[arg-type]
        result_uri=uri(run_id) if kept_result else None,
    )


def results(**runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Result documents by URI: ``r0=[measurement(...)]`` is run r0's result.json."""
    return {uri(run_id): result(run_id, measurements) for run_id, measurements in runs.items()}


def test_no_baseline_gives_no_verdict_on_shapes() -> None:
    found = results(now=[measurement(20.0)])
    outcome = compare_runs([run("a", "now")], None, load=found.get, min_change_pct=5)
    assert (outcome.verdict, outcome.shapes, outcome.unjudged) == ("no_baseline", [], [])


@pytest.mark.parametrize(
    ("now", "verdict", "reason"),
    [
        (measurement(20.2, seed=2), "within noise", None),  # +1 %: inside the windows' 2 % spread
        (measurement(20.8, seed=2), "within noise", None),  # +4 %: significant, under the 5 % floor
        (measurement(24.0, seed=2), "regression", None),  # +20 %
        (measurement(16.0, seed=2), "improvement", None),  # -20 %
        (measurement(40.0, samples=12, seed=2), "no verdict", "candidate has 12 latency samples (< 30)"),
        (
            measurement(40.0, stable=False, seed=2),
            "no verdict",
            "candidate did not reach a stable measurement",
        ),
    ],
)
def test_each_shape_is_judged_by_the_noise_aware_comparison(
    now: dict[str, Any], verdict: str, reason: str | None
) -> None:
    # Given the baseline run and this sweep's run of the same key, each with its result.json
    found = results(base=[measurement(20.0, seed=1)], now=[now])
    # When the sweep's runs are compared with a 5 % practical minimum
    outcome = compare_runs([run("a", "now")], [run("a", "base")], load=found.get, min_change_pct=5)
    # Then the shape gets workflows.reports.compare's verdict (a bad shape without enough evidence
    # gets none), and only a regression makes the sweep's verdict
    [shape] = outcome.shapes
    assert (shape.verdict, shape.run_id, shape.baseline_run_id) == (verdict, "now", "base")
    assert shape.latency.get("reason") == reason
    assert outcome.verdict == ("regression" if verdict == "regression" else "no_regression")
    assert outcome.regressions == ([shape] if verdict == "regression" else [])


def test_a_regression_carries_its_interval_and_both_medians() -> None:
    found = results(base=[measurement(20.0, seed=1)], now=[measurement(24.0, seed=2)])
    [shape] = compare_runs([run("a", "now")], [run("a", "base")], load=found.get, min_change_pct=5).shapes
    low, high = shape.latency["diff_ms_ci95"]
    assert 3.5 < low < high < 4.5  # 20 ms -> 24 ms
    assert shape.latency["median_change"] == pytest.approx(0.2, abs=0.01)
    assert shape.throughput["verdict"] == "regression"
    assert shape.p50_ms == (pytest.approx(20.0, rel=0.01), pytest.approx(24.0, rel=0.01))


def test_the_practical_minimum_is_the_sweep_files() -> None:
    # Given a +4 % shift, well beyond the windows' noise
    found = results(base=[measurement(20.0, seed=1)], now=[measurement(20.8, seed=2)])
    # When the sweep file sets no floor, it is a regression; under a 5 % floor it is not
    assert [
        compare_runs([run("a", "now")], [run("a", "base")], load=found.get, min_change_pct=floor).verdict
        for floor in (0, 5)
    ] == ["regression", "no_regression"]


def test_only_runs_and_shapes_in_both_sweeps_are_compared() -> None:
    # Given a baseline with runs a, gone and x, and a sweep with a (one shape more), new, and x failed
    found = results(
        a0=[measurement(20.0, seed=1), measurement(40.0, batch=8, seed=3)],
        a1=[measurement(20.0, seed=2), measurement(90.0, batch=32, seed=4)],
        new1=[measurement(1.0)],
    )
    baseline = [run("a", "a0"), run("gone", "gone0"), run("x", "x0")]
    current = [run("a", "a1"), run("new", "new1"), run("x", "x1", status="FAILED", kept_result=False)]
    # When they are compared
    outcome = compare_runs(current, baseline, load=found.get, min_change_pct=5)
    # Then only a's batch 1 is judged; new and gone are listed; the failed x is neither (the sweep
    # reports it as failed) and nothing of it was read
    assert [(s.key, s.batch_size, s.verdict) for s in outcome.shapes] == [("a", 1, "within noise")]
    assert (outcome.new_runs, outcome.dropped_runs, outcome.unjudged) == (["new"], ["gone"], [])


@pytest.mark.parametrize(
    ("baseline_run", "found", "reason"),
    [
        (run("a", "base"), results(now=[measurement(20.0)]), f"the baseline result {uri('base')} is missing"),
        (run("a", "base", status="FAILED"), results(now=[measurement(20.0)]), "the baseline run base failed"),
        (
            run("a", "base"),
            results(base=[measurement(20.0, batch=8)], now=[measurement(20.0)]),
            "no shape measured in both runs",
        ),
    ],
)
def test_a_run_that_cannot_be_judged_is_listed_with_the_reason(
    baseline_run: RunSummary, found: dict[str, dict[str, Any]], reason: str
) -> None:
    outcome = compare_runs([run("a", "now")], [baseline_run], load=found.get, min_change_pct=5)
    assert (outcome.verdict, outcome.shapes) == ("no_regression", [])
    [unjudged] = outcome.unjudged
    assert (unjudged.key, unjudged.run_id) == ("a", "now")
    assert unjudged.reason.startswith(reason)


@pytest.fixture
def aws_bucket() -> str:
    return SETTINGS.bucket


@pytest.fixture
def s3(aws: Aws) -> Any:
    return aws.s3


def put_result(
    s3: Any,
    run_id: str,
    measurements: list[dict[str, Any]],
    *,
    status: str = "SUCCEEDED",
    error: dict[str, str] | None = None,
) -> None:
    """The run's result.json where the deploy pipeline writes it (its state's figures included)."""
    shapes = [{k: v for k, v in m.items() if k in ShapeStats.model_fields} for m in measurements]
    extra: dict[str, Any] = {"benchmark": {"shapes": shapes, "seconds": 1.0}, "status": status}
    if error:
        extra |= {"error": error, "diagnosis": {"id": "F06"}}
    document = result(run_id, measurements, **extra)
    s3.put_object(
        Bucket=SETTINGS.bucket, Key=f"results/{run_id}/result.json", Body=json.dumps(document).encode()
    )


def request(sweep_id: str, *outcomes: RunOutcome) -> CompareRequest:
    sweep = parse_sweep({"name": "nightly", "base": BASE, "regression": {"min_change_pct": 5}})
    return CompareRequest(sweep=sweep, sweep_id=sweep_id, runs=list(outcomes))


def succeeded(sweep_id: str) -> RunOutcome:
    return RunOutcome(index=0, key="k", run_id=f"{sweep_id}-0", status="SUCCEEDED")


def read(s3: Any, key: str) -> str | None:
    try:
        return str(s3.get_object(Bucket=SETTINGS.bucket, Key=key)["Body"].read().decode())
    except s3.exceptions.NoSuchKey:
        return None


def baseline_id(s3: Any) -> str | None:
    text = read(s3, "sweeps/nightly/baseline.json")
    return None if text is None else str(json.loads(text)["sweep_id"])


def test_a_clean_sweep_becomes_the_baseline_and_a_regression_does_not(s3: Any) -> None:
    # Given a first sweep with no baseline
    put_result(s3, "s1-0", [measurement(20.0, seed=1), measurement(40.0, batch=8, seed=3)])
    first = compare_sweep(request("s1", succeeded("s1")), s3=s3, settings=SETTINGS)
    # Then it reports no baseline and becomes the baseline
    assert (first.verdict, first.failed_count) == ("no_baseline", 0)
    assert baseline_id(s3) == "s1"
    # When the next sweep is 20 % slower at batch 1 and unchanged at batch 8
    put_result(s3, "s2-0", [measurement(24.0, seed=2), measurement(40.2, batch=8, seed=4)])
    second = compare_sweep(request("s2", succeeded("s2")), s3=s3, settings=SETTINGS)
    # Then it is a regression against s1, named with its interval, and the baseline stays s1
    assert (second.verdict, second.baseline_sweep_id, second.regressions) == ("regression", "s1", 1)
    named = re.search(
        r"1 of 2 shapes regressed \(k b1/natural c1: p50 \+([\d.]+)% \(CI95 \+[\d.]+\.\.", second.summary
    )
    assert named and 18 < float(named[1]) < 22, second.summary
    assert baseline_id(s3) == "s1"
    summary = json.loads(read(s3, "sweeps/nightly/s2/summary.json") or "{}")
    verdicts = {s["batch_size"]: s for s in summary["comparison"]["shapes"]}
    assert (verdicts[1]["verdict"], verdicts[8]["verdict"]) == ("regression", "within noise")
    assert verdicts[1]["latency"]["diff_ms_ci95"][0] > 3
    assert summary["comparison"]["min_change_pct"] == 5
    # And the report's table shows both verdicts, the interval and the noise
    report = read(s3, "sweeps/nightly/s2/report.md") or ""
    assert "| run | batch | seq | conc | p50 ms (was → now) | verdict | latency | median change |" in report
    row = re.search(
        r"\| k \| 1 \| natural \| 1 \| 20\.\d+ → 2[34]\.\d+ \| \*\*regression\*\* \| regression \| \+(\d+)",
        report,
    )
    assert row and 18 <= int(row[1]) <= 22, report


def test_a_sweep_within_noise_moves_the_baseline(s3: Any) -> None:
    put_result(s3, "s1-0", [measurement(20.0, seed=1)])
    compare_sweep(request("s1", succeeded("s1")), s3=s3, settings=SETTINGS)
    # When the next sweep differs by 1 %, inside the windows' own 2 % spread
    put_result(s3, "s2-0", [measurement(20.2, seed=2)])
    outcome = compare_sweep(request("s2", succeeded("s2")), s3=s3, settings=SETTINGS)
    # Then there is no regression and it becomes the baseline later sweeps are judged against
    assert (outcome.verdict, outcome.regressions, outcome.baseline_sweep_id) == ("no_regression", 0, "s1")
    assert baseline_id(s3) == "s2"


def test_a_missing_baseline_result_gives_no_verdict_not_a_failure(s3: Any) -> None:
    # Given a baseline sweep whose run's result.json was since deleted
    put_result(s3, "s1-0", [measurement(20.0, seed=1)])
    compare_sweep(request("s1", succeeded("s1")), s3=s3, settings=SETTINGS)
    s3.delete_object(Bucket=SETTINGS.bucket, Key="results/s1-0/result.json")
    # When the next sweep, much slower, is compared with it
    put_result(s3, "s2-0", [measurement(40.0, seed=2)])
    outcome = compare_sweep(request("s2", succeeded("s2")), s3=s3, settings=SETTINGS)
    # Then the run gets no verdict, with the reason, rather than a guess or a crash
    assert (outcome.verdict, outcome.regressions) == ("no_regression", 0)
    assert f"1 runs not judged (s2-0: the baseline result {uri('s1-0')} is missing" in outcome.summary
    report = read(s3, "sweeps/nightly/s2/report.md") or ""
    assert f"- k (s2-0): the baseline result {uri('s1-0')} is missing or unreadable" in report
    # And the sweep, complete and with no regression, becomes the baseline (its results exist)
    assert baseline_id(s3) == "s2"


def test_failed_runs_are_reported_with_their_diagnosis_and_keep_the_baseline(s3: Any) -> None:
    put_result(s3, "s1-0", [measurement(20.0, seed=1)])
    compare_sweep(request("s1", succeeded("s1")), s3=s3, settings=SETTINGS)
    put_result(
        s3,
        "s2-0",
        [],
        status="FAILED",
        error={"Error": "CapacityStall", "Cause": "no capacity for ml.g5.xlarge"},
    )
    outcome = compare_sweep(
        request(
            "s2",
            RunOutcome(index=0, key="k", run_id="s2-0", status="FAILED", error="States.TaskFailed"),
            RunOutcome(index=1, key="j", run_id="s2-1", status="FAILED", error="States.TaskFailed"),
        ),
        s3=s3,
        settings=SETTINGS,
    )
    assert (outcome.failed_count, outcome.failed_runs) == (2, ["s2-0", "s2-1"])
    assert "CapacityStall (F06): no capacity" in outcome.summary
    assert "no result.json" in outcome.summary
    # A failed run is not compared, and is not listed as dropped from the sweep
    summary = json.loads(read(s3, "sweeps/nightly/s2/summary.json") or "{}")
    assert summary["comparison"]["shapes"] == summary["comparison"]["dropped_runs"] == []
    assert summary["comparison"]["new_runs"] == ["j"]
    assert baseline_id(s3) == "s1"


def test_the_input_command_prints_what_the_state_machines_take() -> None:
    from typer.testing import CliRunner

    from workflows.cli.app import app
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
