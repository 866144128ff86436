"""PlanRemediation: after DiagnoseFailure, decide where the pipeline goes and rewrite the attempt.

Routes (the deploy pipeline's ChooseRemediation branches on ``remediation.route``):
- ``redeploy``: remove the failed attempt, deploy attempt N+1 under a new endpoint name;
- ``repack``: remove the failed attempt, pack again with the added requirements, redeploy;
- ``warm``: warm every shape again on the same endpoint (F21/F18);
- ``retry``: wait ``wait_s``, then the invocation steps again (F12/F15);
- ``fail``: tear down and fail with the diagnosis (no fix, a bound spent, or nothing left to try).

Every decision, applied or refused, is appended to ``attempt.history``; only applied ones count
against ``spec.remediation.<action>``, and deploys against ``max_total_attempts``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from workflows import clock
from workflows.contracts import Diagnosis, PipelineState, RemediationPlan, RemediationRecord
from workflows.diagnosis.actions import Action
from workflows.diagnosis.collect import failed_phase
from workflows.remediation import RETRY_FIRST_WAIT_S, RETRY_MAX_WAIT_S, changes
from workflows.remediation.changes import Refused, Step
from workflows.settings import Settings

Route = Literal["redeploy", "repack", "warm", "retry", "fail"]

REDEPLOY: dict[Action, Callable[..., Step]] = {
    Action.NEXT_INSTANCE_TYPE: changes.next_region,
    Action.LARGER_INSTANCE: changes.larger_instance,
    Action.NEXT_MEMORY_SIZE: changes.next_memory_size,
    Action.NEWER_AMI: changes.newer_ami,
    Action.SINGLE_WORKER: changes.single_worker,
    Action.LOWER_IC_MEMORY: changes.lower_ic_memory,
}
# Phases whose failure a remediation can act on; a failed teardown or a failed conversion cannot be
# fixed by another deploy.
REMEDIABLE_PHASES = {"deploy", "wait", "warmup", "benchmark"}
EVIDENCE_LINES = 3
EVIDENCE_CHARS = 240


def _unknown(state: PipelineState) -> Diagnosis:
    name = state.error.Error if state.error else "no error"
    return Diagnosis(
        id="unknown", title=f"not diagnosed ({name})", evidence=[], action="fail", confidence=0.0
    )


def applied_count(state: PipelineState, action: str) -> int:
    return sum(1 for record in state.attempt.history if record.applied and record.action == action)


def _bound(state: PipelineState, action: Action, route: Route) -> str | None:
    """Why the action may not run now, or None."""
    spec = state.spec.remediation
    if not spec.enabled:
        return "automatic remediation is off (spec.remediation.enabled: false)"
    allowed = spec.attempts_for(action.value)
    if applied_count(state, action.value) >= allowed:
        return f"spec.remediation.{action.value} allows {allowed}, all used"
    if route in ("redeploy", "repack") and state.attempt.number >= spec.max_total_attempts:
        return f"spec.remediation.max_total_attempts ({spec.max_total_attempts}) deploys made"
    return None


def _route_of(action: Action) -> Route:
    if action in REDEPLOY:
        return "redeploy"
    return {
        Action.ADD_REQUIREMENT: "repack",
        Action.WARM_SHAPES: "warm",
        Action.RETRY_WITH_BACKOFF: "retry",
    }.get(action, "fail")  # type: ignore[return-value]


def _next_step(state: PipelineState, diagnosis: Diagnosis, action: Action, region: str) -> Step | None:
    """The next configuration for a deploy route; None for routes that keep the endpoint."""
    if action is Action.NEWER_AMI:
        return changes.newer_ami(state, diagnosis, region=region)
    if action in REDEPLOY:
        return REDEPLOY[action](state, diagnosis)
    if action is Action.ADD_REQUIREMENT:
        return changes.add_requirement(state, diagnosis)
    return None


def _record(
    state: PipelineState, diagnosis: Diagnosis, applied: bool, reason: str, step: Step | None = None
) -> RemediationRecord:
    now = clock.now()
    deploy = state.deploy
    return RemediationRecord(
        attempt=state.attempt.number,
        action=diagnosis.action,
        diagnosis_id=diagnosis.id,
        diagnosis_title=diagnosis.title,
        confidence=diagnosis.confidence,
        error=state.error.Error if state.error else "",
        evidence=[line[:EVIDENCE_CHARS] for line in diagnosis.evidence[:EVIDENCE_LINES]],
        applied=applied,
        reason=reason,
        changes=step.changes if step else [],
        endpoint_name=deploy.endpoint_name if deploy else None,
        region=deploy.region if deploy else None,
        instance_type=deploy.instance_type if deploy else None,
        endpoint_created_at=deploy.created_at if deploy else None,
        waited_s=round((now - deploy.created_at).total_seconds(), 1) if deploy else None,
        polls=state.endpoint.polls if state.endpoint else 0,
        benchmark_job=state.benchmark_job.job_name if state.benchmark_job else None,
        at=now,
    )


def _refuse(state: PipelineState, diagnosis: Diagnosis, reason: str) -> PipelineState:
    record = _record(state, diagnosis, False, reason)
    attempt = state.attempt.model_copy(update={"history": [*state.attempt.history, record]})
    plan = RemediationPlan(route="fail", action=diagnosis.action, reason=reason)
    return state.model_copy(update={"attempt": attempt, "remediation": plan})


def plan_remediation(state: PipelineState, *, settings: Settings) -> PipelineState:
    """The PlanRemediation step: the execution state with the next attempt and its route.

    Args:
        state: the whole execution state after DiagnoseFailure (``error`` and ``diagnosis`` set).
        settings: the region (the default image of an instance type, for F20's CUDA).

    Returns:
        The state to continue with: on a fix, the caught error and the previous attempt's
        results cleared (kept in ``attempt.history``); on ``fail``, the state as it was, plus the
        refusal in the history.
    """
    diagnosis = state.diagnosis or _unknown(state)
    action = Action(diagnosis.action) if diagnosis.action in Action._value2member_map_ else Action.FAIL
    route = _route_of(action)
    if route == "fail":
        return _refuse(state, diagnosis, f"no automatic fix for {diagnosis.id}")
    phase = failed_phase(state)
    if phase not in REMEDIABLE_PHASES:
        return _refuse(state, diagnosis, f"the {phase} step failed: another attempt would not change it")
    spent = _bound(state, action, route)
    if spent:
        return _refuse(state, diagnosis, spent)
    try:
        step = _next_step(state, diagnosis, action, settings.region)
    except Refused as refused:
        return _refuse(state, diagnosis, str(refused))
    record = _record(state, diagnosis, True, _reason(route, step), step)
    history = [*state.attempt.history, record]
    cleared = dict.fromkeys(("error", "diagnosis", "warmup", "benchmark_plan", "benchmark_job", "benchmark"))
    wait_s = 0
    if route in ("redeploy", "repack") and step is not None:
        attempt = state.attempt.model_copy(
            update={
                "number": state.attempt.number + 1,
                "instance_type_index": step.instance_type_index,
                "region_index": step.region_index,
                "overrides": step.overrides,
                "history": history,
            }
        )
        cleared.update(deploy=None, endpoint=None)
        if route == "repack":
            cleared.update(pack=None, preflight=None)
    else:
        attempt = state.attempt.model_copy(update={"history": history})
        if route == "retry":
            used = applied_count(state, action.value)
            wait_s = min(RETRY_MAX_WAIT_S, RETRY_FIRST_WAIT_S * 2**used)
    plan = RemediationPlan(route=route, action=action.value, reason=record.reason, wait_s=wait_s)
    return state.model_copy(update={**cleared, "attempt": attempt, "remediation": plan})


def _reason(route: Route, step: Step | None) -> str:
    changed = "; ".join(f"{c.setting}: {c.before} -> {c.after}" for c in (step.changes if step else []))
    if step is not None and step.skipped:
        changed += f" (passed over, no quota: {', '.join(step.skipped)})"
    return {
        "redeploy": f"redeploy with {changed}",
        "repack": f"repack and redeploy with {changed}",
        "warm": "warm every shape again, tolerating the first timeouts (the compile or load finishes server-side)",
        "retry": "wait, then invoke again with backoff",
    }.get(route, route)
