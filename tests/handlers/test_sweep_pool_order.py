"""A sweep's recommendation proposes an InstancePools order: the types that met the target, cheapest
per 1M inferences first, each with its own figures, and a `hosting` block a run spec takes as is."""

from __future__ import annotations

import yaml

from tests.handlers.test_sweep_recommend import summary_run
from tests.support.hosting import spec_with
from workflows.hosting.modes import run_checks
from workflows.preflight.context import PreflightContext
from workflows.sweeps.pool_order import hosting_block
from workflows.sweeps.recommend import recommend
from workflows.sweeps.recommend_render import render
from workflows.sweeps.spec import RecommendPolicy

GPU, CPU, SLOW_CPU = "ml.g5.xlarge", "ml.c6i.xlarge", "ml.c6i.2xlarge"
POLICY = RecommendPolicy(p99_ms=100, batch_size=8)


def test_the_types_that_met_the_target_are_pooled_by_price_performance() -> None:
    # Given a GPU type that is fast, a CPU type that meets the target, and one that misses it
    runs = [
        summary_run(0, CPU, {1: 40.0, 4: 80.0}),
        summary_run(1, GPU, {1: 4.0, 4: 6.0}),
        summary_run(2, SLOW_CPU, {1: 300.0, 4: 500.0}),
    ]
    # When the runs are ranked
    recommendation = recommend(runs, POLICY)
    order = recommendation.pool_order
    # Then the pools are the two that met it, ordered by USD per 1M, lowest first
    assert order is not None
    costs = {p.instance_type: p.cost_per_million for p in order.pools}
    assert [p.instance_type for p in order.pools] == sorted(costs, key=lambda name: costs[name] or 0.0)
    assert {p.instance_type for p in order.pools} == {GPU, CPU}
    assert [p.priority for p in order.pools] == [1, 2]
    assert {p.instance_type: p.device for p in order.pools} == {GPU: "gpu", CPU: "cpu"}
    # And each row carries its own type's figures (from its own run)
    by_run = {p.run_id: p for p in recommendation.points}
    for pool in order.pools:
        point = next(
            q for q in by_run.values() if q.run_id == pool.run_id and q.concurrency == pool.concurrency
        )
        assert (pool.samples_per_s, pool.p99_ms) == (point.samples_per_s, point.p99_ms)
    # And the hosting block is a real-time spec's, and that spec passes the pools preflight
    block = yaml.safe_load(hosting_block(order))["hosting"]
    assert block == {"mode": "realtime", "capacity": "pools", "instance_type_fallbacks": [p.instance_type for p in order.pools]}  # fmt: skip
    spec = spec_with("bundled", block)
    assert not [f for f in run_checks(PreflightContext(spec)).findings if f.id == "F06"]
    # And the report shows the section and the block to paste
    text = "\n".join(render(recommendation, runs))
    assert "### Instance pools" in text and "capacity: pools" in text


def test_one_type_gives_no_pools_and_a_mode_of_one_device_pools_only_its_device() -> None:
    # Given one type meeting the target, Then there is nothing to order
    assert recommend([summary_run(0, CPU, {1: 40.0})], POLICY).pool_order is None
    # Given inference-component runs on two CPU types and a GPU type dearer per 1M than either
    runs = [
        summary_run(0, CPU, {1: 40.0, 4: 80.0}),
        summary_run(1, GPU, {1: 60.0, 4: 90.0}),
        summary_run(2, SLOW_CPU, {1: 45.0, 4: 85.0}),
    ]
    for run in runs:
        run.hosting["mode"] = "inference-component"
    order = recommend(runs, POLICY).pool_order
    # Then only the first device's types are pooled, and the other is left out with the reason
    assert order is not None
    assert [p.instance_type for p in order.pools] == [CPU, SLOW_CPU]
    assert order.left_out == [f"{GPU}: a gpu type; the inference-component mode pools one device only"]
