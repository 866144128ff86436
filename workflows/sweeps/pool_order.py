"""The instance pools a sweep proposes: the types that met its target, by price-performance.

A sweep that measured several instance types under one latency target knows the order a pooled
endpoint should try them in: the cheapest per 1M inferences first (price over measured throughput),
each type once, at most five (InstancePoolList max 5). The types must share the recommended run's
mode, one that pools; CPU and GPU types mix only in the real-time mode, where each device gets its
own artifact and Model (``workflows/hosting/pool_devices.py``). The block it writes is a run spec's
``hosting`` with ``capacity: pools``; its figures are per type, never a mixed fleet's.
"""

from __future__ import annotations

import yaml

from workflows.hosting.modes import strategies
from workflows.hosting.pool_devices import OVERRIDE_MODES
from workflows.hosting.spec_bases import MAX_INSTANCE_POOLS
from workflows.images.accelerators import device_of
from workflows.sweeps.compare import RunSummary
from workflows.sweeps.recommendation import Point, PoolOrder, PoolType


def pool_order(best: list[tuple[RunSummary, Point]]) -> PoolOrder | None:
    """The pools from each run's best point that met the target (None: fewer than two types)."""
    priced = sorted(
        (pair for pair in best if pair[1].stable and pair[1].cost_per_million is not None),
        key=lambda pair: pair[1].cost_per_million or 0.0,
    )
    if not priced:
        return None
    mode = str(priced[0][0].hosting.get("mode", ""))
    pooling = {name for name, strategy in strategies().items() if strategy.supports_pools}
    if mode not in pooling:
        return None
    first_device = device_of(str(priced[0][0].hosting.get("instance_type")))
    chosen: list[tuple[str, Point]] = []
    left_out: list[str] = []
    for run, point in priced:
        name = str(run.hosting.get("instance_type") or "")
        if not name or name in (n for n, _ in chosen):
            continue
        if run.hosting.get("mode") != mode:
            left_out.append(f"{name}: measured in the {run.hosting.get('mode')} mode, not {mode}")
        elif device_of(name) != first_device and mode not in OVERRIDE_MODES:
            left_out.append(f"{name}: a {device_of(name)} type; the {mode} mode pools one device only")
        elif len(chosen) == MAX_INSTANCE_POOLS:
            left_out.append(f"{name}: SageMaker takes at most {MAX_INSTANCE_POOLS} pools")
        else:
            chosen.append((name, point))
    if len(chosen) < 2:
        return None
    pools = [
        PoolType(
            priority=priority,
            instance_type=name,
            device=device_of(name),
            run_id=point.run_id,
            concurrency=point.concurrency,
            p99_ms=point.p99_ms,
            samples_per_s=point.samples_per_s,
            cost_per_million=point.cost_per_million,
        )
        for priority, (name, point) in enumerate(chosen, start=1)
    ]
    hosting: dict[str, object] = {
        "mode": mode,
        "capacity": "pools",
        "instance_type_fallbacks": [pool.instance_type for pool in pools],
    }
    return PoolOrder(mode=mode, pools=pools, hosting=hosting, left_out=left_out)


def hosting_block(order: PoolOrder) -> str:
    """The ``hosting`` block as YAML, ready to paste into a run spec."""
    return yaml.safe_dump({"hosting": order.hosting}, sort_keys=False, default_flow_style=None).strip()
