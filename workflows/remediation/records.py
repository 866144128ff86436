"""What a remediation records: the settings it changed, the decision, and the route it chose.

Part of the execution state (``attempt.history``, ``remediation``); ``workflows.contracts``
re-exports them, so steps import them from there like every other contract.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from workflows.models import Contract


class AttemptChange(Contract):
    """One setting a remediation changed for the next attempt."""

    setting: str = Field(description="e.g. instance_type, workers, extra_requirements.")
    before: Any = None
    after: Any = None


class RemediationRecord(Contract):
    """One diagnosed failure and what was done about it (applied, or refused and why)."""

    attempt: int = Field(description="The attempt that failed.")
    action: str = Field(description="The diagnosis' action (workflows/diagnosis/actions.py).")
    diagnosis_id: str
    diagnosis_title: str
    confidence: float
    error: str = Field("", description="The caught error's name.")
    evidence: list[str] = Field(default_factory=list, description="The first lines of the evidence.")
    applied: bool
    reason: str = Field(description="What was done, or why nothing could be.")
    changes: list[AttemptChange] = Field(default_factory=list)
    endpoint_name: str | None = None
    region: str | None = Field(None, description="The failed endpoint's Region where not the run's.")
    instance_type: str | None = None
    endpoint_created_at: datetime | None = None
    waited_s: float | None = Field(None, description="From CreateEndpoint to this decision.")
    polls: int = Field(0, description="Status polls of the failed attempt's wait loop.")
    benchmark_job: str | None = Field(
        None,
        description="The failed try's benchmark processing job, if one was started (its name is never reused).",
    )
    at: datetime
    removed: list[str] = Field(default_factory=list, description="The failed attempt's resources deleted.")
    left: list[str] = Field(
        default_factory=list, description="Its resources that could not be deleted yet (teardown retries)."
    )


class RemediationPlan(Contract):
    """Where the pipeline goes after a diagnosis (the Choice branches on ``route``)."""

    route: Literal["redeploy", "repack", "warm", "retry", "fail"]
    action: str
    reason: str
    wait_s: int = Field(0, description="retry: seconds to wait before the invocation step again.")
