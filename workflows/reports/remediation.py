"""What remediation did, in the result and the report: each attempt, its diagnosis, what changed.

The figures come from ``attempt.history`` (one record per diagnosed failure, applied or not). An
earlier attempt's endpoint is billed like the final one: from CreateEndpoint to its deletion
(the failed-attempt removal, or the final teardown for one left Creating, F06), an upper bound.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from workflows.reports.tables import table

# Actions that keep the failed attempt's endpoint (its time is the final endpoint's line).
SAME_ENDPOINT = {"warm_shapes", "retry_with_backoff"}
# Per record: DiagnoseFailure, PlanRemediation, ChooseRemediation, the removal, the redeploy.
TRANSITIONS_PER_REMEDIATION = 5


def _when(value: str | None) -> str:
    return datetime.fromisoformat(value).strftime("%H:%M:%S") if value else "-"


def _changes(record: dict[str, Any]) -> str:
    changes = record.get("changes") or []
    return "; ".join(f"{c['setting']}: {c['before']} → {c['after']}" for c in changes) or "-"


def remediation_lines(result: dict[str, Any]) -> list[str]:
    """The report's Remediation section (empty when the first attempt did it all)."""
    attempt = result.get("attempt") or {}
    history = attempt.get("history") or []
    if not history:
        return []
    lines = [
        "",
        "## Remediation",
        "",
        f"{len(history)} diagnosed failure(s); the run ended on attempt {attempt.get('number', 1)}.",
        "",
    ]
    lines += table(
        ["attempt", "at", "diagnosis", "action", "applied", "changed", "waited s", "removed", "left"],
        [
            [
                r["attempt"],
                _when(r.get("at")),
                f"{r['diagnosis_id']} {r['diagnosis_title']} ({r['confidence']:.2f})",
                r["action"],
                "yes" if r["applied"] else f"no: {r['reason']}",
                _changes(r),
                r.get("waited_s"),
                ", ".join(r.get("removed") or []) or "-",
                ", ".join(r.get("left") or []) or "-",
            ]
            for r in history
        ],
    )
    evidence = [f"- attempt {r['attempt']}: {r['evidence'][0]}" for r in history if r.get("evidence")]
    if evidence:
        lines += ["", "Evidence (first line each):", "", *evidence]
    return lines


def earlier_attempt_cost_lines(
    result: dict[str, Any], prices: dict[str, Any], line: Any
) -> list[dict[str, Any]]:
    """Instance-hours of the endpoints of earlier attempts (``line`` builds a cost line)."""
    finished = result.get("finished_at")
    lines = []
    for record in (result.get("attempt") or {}).get("history") or []:
        created, instance_type = record.get("endpoint_created_at"), record.get("instance_type")
        if not record.get("applied") or not created or not instance_type or record["action"] in SAME_ENDPOINT:
            continue
        left = any(item.startswith("endpoint/") for item in record.get("left") or [])
        end = finished if left or not finished else record["at"]
        if end is None:
            continue
        hours = (datetime.fromisoformat(end) - datetime.fromisoformat(created)).total_seconds() / 3600
        note = (
            "left Creating for teardown: until the run ended, an upper bound"
            if left
            else "from CreateEndpoint to its removal before the next attempt"
        )
        if record["diagnosis_id"] == "F06":
            note += "; no instance was ever assigned (capacity stall)"
        count = int((result.get("hosting") or {}).get("instance_count") or 1)
        lines.append(
            line(
                f"attempt {record['attempt']} endpoint {instance_type} × {count} ({record['diagnosis_id']})",
                hours * count,
                "instance-hour",
                prices["sagemaker"]["inference_instance_hour"].get(instance_type),
                note,
            )
        )
    return lines


def remediation_transitions(result: dict[str, Any]) -> int:
    """State transitions of the remediation loops: their states and the earlier attempts' polls."""
    history = (result.get("attempt") or {}).get("history") or []
    return sum(TRANSITIONS_PER_REMEDIATION + 3 * int(r.get("polls") or 0) for r in history)
