"""PlanSweep: a sweep spec becomes the list of deploy pipeline inputs the Map runs."""

from __future__ import annotations

import hashlib
from datetime import datetime

from pydantic import Field

from workflows import clock
from workflows.contracts import Contract, PipelineState
from workflows.naming import new_run_id
from workflows.sweeps.spec import SweepSpec, expand


class PlanRequest(Contract):
    sweep: SweepSpec
    execution_name: str = Field(description="The sweep execution's name ($$.Execution.Name).")


class PlannedRun(Contract):
    index: int
    key: str
    pipeline: PipelineState = Field(description="The child deploy pipeline's whole input.")


class SweepPlan(Contract):
    sweep_id: str
    items: list[PlannedRun]


def sweep_id(sweep: SweepSpec, execution_name: str, now: datetime) -> str:
    """``<name>-<yyyymmdd-hhmmss>-<4 hex of the execution name>``: a retried plan names the same runs
    within the same second, and two executions started in one second still differ."""
    digest = hashlib.sha256(execution_name.encode()).hexdigest()[:4]
    return new_run_id(sweep.name, now=now, suffix=digest)


def plan_sweep(request: PlanRequest, *, now: datetime | None = None) -> SweepPlan:
    """Expand the matrix; each run's id is ``<sweep id>-<index>`` and names its child execution.

    Raises:
        SpecInvalid: a matrix combination is not a valid run (nothing has started yet).
    """
    started = now or clock.now()
    identifier = sweep_id(request.sweep, request.execution_name, started)
    items = [
        PlannedRun(
            index=item.index,
            key=item.key,
            pipeline=PipelineState(run_id=f"{identifier}-{item.index}", spec=item.spec, started_at=started),
        )
        for item in expand(request.sweep)
    ]
    return SweepPlan(sweep_id=identifier, items=items)
