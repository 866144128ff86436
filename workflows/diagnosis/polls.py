"""Polled series: one endpoint seen several times, as users keep it when a deploy hangs.

Two forms carry the F06 stall (Creating, no instance ever assigned, then Failed with an empty
reason) over time rather than in one snapshot:

- ``endpoint-polls``: ``describe-endpoint`` outputs pasted one after another (a shell loop, a
  notebook cell re-run), each optionally after the time it was taken (``date -u``, an ISO time,
  ``HH:MM``);
- ``iac-waiter``: an infrastructure-as-code waiter around CreateEndpoint: Terraform's ``Still
  creating... [50m0s elapsed]`` and its ``unexpected state 'Failed'`` / ``timeout while waiting``
  errors, and CDK or CloudFormation stack events of an ``AWS::SageMaker::Endpoint``.

Each observation becomes a ``Poll``; ``apply`` turns them into the same evidence the pipeline's
own wait loop gives (``collect._last_poll``): the last observation as the endpoint's description,
taken at the last observation time, so the F06 facts read a pasted series as they read the
pipeline's poll history. The fact ``stalled_in_polls`` reads the series itself.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from workflows.clock import as_datetime
from workflows.diagnosis.evidence import IAC_WAITER, Evidence, Poll

# An IaC waiter does not show ProductionVariants: only a long Creating tells a stall from a slow start.
IAC_STALL_FACTOR = 3.0

_ISO = re.compile(r"\b(\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)")
_DATE_OUTPUT = re.compile(
    r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<month>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) "
    r"(?P<time>\d\d:\d\d:\d\d) (?:UTC|GMT|Z) (?P<year>\d{4})\b"
)
_CLOCK = re.compile(r"^\s*\[?(?P<h>\d{1,2}):(?P<m>\d\d)(?::(?P<s>\d\d))?\]?(?:\s|$)")
_TF_CREATING = re.compile(
    r"aws_sagemaker_endpoint\.[\w-]+: Still creating\.\.\. \[(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?:(?P<s>\d+)s)? ?elapsed\]"
)
_TF_FAILED = re.compile(
    r"waiting for SageMaker(?: AI)? Endpoint \((?P<name>[^)]+)\) (?:create|to be in service)\S*:? "
    r"unexpected state '(?P<state>\w+)', wanted target 'InService'\.(?: last error: (?P<reason>.*))?"
)
_TF_TIMEOUT = re.compile(
    r"waiting for SageMaker(?: AI)? Endpoint \((?P<name>[^)]+)\).{0,40}?timeout while waiting for state to "
    r"become 'InService' \(last state: '(?P<state>\w+)', timeout: (?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?:(?P<s>\d+)s)?\)"
)
# cdk deploy's event lines: "stack | 3/5 | 09:11:02 | CREATE_IN_PROGRESS | AWS::SageMaker::Endpoint | Id reason".
_CFN_EVENT = re.compile(
    r"(?P<clock>\d{1,2}:\d\d:\d\d(?: ?[AP]M)?) *\| *(?P<status>CREATE_IN_PROGRESS|CREATE_FAILED|CREATE_COMPLETE)"
    r" *\| *AWS::SageMaker::Endpoint *\| *(?P<rest>.*)$"
)
_EMPTY_REASON = re.compile(r"^\s*(?:%!s\(<nil>\)|<nil>|None|null|\"\"|''|\.)?\s*$")
_MONTHS = {
    m: i
    for i, m in enumerate(
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], start=1
    )
}


def is_empty_reason(reason: str | None) -> bool:
    return reason is None or bool(_EMPTY_REASON.match(reason))


def from_describe(value: dict[str, Any], observed_at: datetime | None) -> Poll:
    """A describe-endpoint output as one poll."""
    return Poll(
        status=str(value.get("EndpointStatus")),
        observed_at=observed_at,
        created=as_datetime(value.get("CreationTime")),
        last_modified=as_datetime(value.get("LastModifiedTime")),
        variants=bool(value.get("ProductionVariants")),
        reason=str(value["FailureReason"]) if value.get("FailureReason") is not None else None,
    )


def time_on(lines: list[str], base: datetime | None) -> datetime | None:
    """The latest time written in ``lines`` (ISO, ``date`` output, or ``HH:MM`` on ``base``'s day)."""
    found: datetime | None = None
    for line in lines:
        if match := _DATE_OUTPUT.search(line):
            parsed = datetime.strptime(
                f"{match['year']}-{_MONTHS.get(match['month'], 1):02d}-{int(match['day']):02d}T{match['time']}+00:00",
                "%Y-%m-%dT%H:%M:%S%z",
            )
            found = parsed
        elif match := _ISO.search(line.split("{")[0]):
            found = as_datetime(match.group(1).replace(" ", "T")) or found
        elif (match := _CLOCK.match(line)) and base is not None:
            found = _on_day(base, int(match["h"]), int(match["m"]), int(match["s"] or 0))
    return found


def _on_day(base: datetime, hour: int, minute: int, second: int) -> datetime:
    at = base.replace(hour=hour % 24, minute=minute, second=second, microsecond=0)
    return at + timedelta(days=1) if at < base - timedelta(hours=1) else at


def _duration(match: re.Match[str]) -> float:
    return float(int(match["h"] or 0) * 3600 + int(match["m"] or 0) * 60 + int(match["s"] or 0))


def from_waiter_line(line: str, base: datetime | None) -> Poll | None:
    """One line of a Terraform, CDK or CloudFormation waiter, as a poll; None when it is none."""
    if match := _TF_CREATING.search(line):
        return Poll(status="Creating", elapsed_s=_duration(match), form=IAC_WAITER)
    if match := _TF_TIMEOUT.search(line):
        return Poll(status=match["state"], elapsed_s=_duration(match), form=IAC_WAITER)
    if match := _TF_FAILED.search(line):
        reason = (match["reason"] or "").strip()
        return Poll(
            status=match["state"], reason=None if is_empty_reason(reason) else reason, form=IAC_WAITER
        )
    if match := _CFN_EVENT.search(line):
        clock = datetime.strptime(
            match["clock"].replace(" ", ""), "%I:%M:%S%p" if "M" in match["clock"] else "%H:%M:%S"
        )
        at = _on_day(base, clock.hour, clock.minute, clock.second) if base else None
        status = {"CREATE_IN_PROGRESS": "Creating", "CREATE_FAILED": "Failed"}.get(
            match["status"], "InService"
        )
        reason = _cfn_reason(match["rest"]) if status == "Failed" else None
        return Poll(status=status, observed_at=at, reason=reason, form=IAC_WAITER)
    return None


def from_stack_event(event: dict[str, Any]) -> Poll | None:
    """One CloudFormation ``describe-stack-events`` event of an endpoint, as a poll."""
    if event.get("ResourceType") != "AWS::SageMaker::Endpoint":
        return None
    status = {
        "CREATE_IN_PROGRESS": "Creating",
        "CREATE_FAILED": "Failed",
        "CREATE_COMPLETE": "InService",
    }.get(str(event.get("ResourceStatus")))
    if status is None:
        return None
    reason = _cfn_reason(str(event.get("ResourceStatusReason") or "")) if status == "Failed" else None
    return Poll(
        status=status, observed_at=as_datetime(event.get("Timestamp")), reason=reason, form=IAC_WAITER
    )


def _cfn_reason(text: str) -> str | None:
    """The endpoint's own reason inside a stack event's message; None when it is empty."""
    match = re.search(
        r"(?:Failure ?Reason|Reason)\s*[:=]\s*(?P<reason>.*?)[\"']?\s*(?:\(RequestToken.*)?$", text
    )
    reason = match["reason"] if match else text
    reason = reason.strip().strip("\"'").strip()
    return None if is_empty_reason(reason) else reason


def apply(evidence: Evidence, polls: list[Poll]) -> None:
    """The series as the pipeline's poll history: the last observation becomes the endpoint seen.

    A pasted series of full describe-endpoint outputs keeps the last one as ``evidence.endpoint``;
    a waiter's series, which has no DescribeEndpoint, is written as one (status, reason, no variants).
    """
    if not polls:
        return
    evidence.polls.extend(polls)
    last = polls[-1]
    observed = [p.observed_at for p in polls if p.observed_at is not None]
    if observed:
        evidence.observed_at = max(observed)
    if evidence.endpoint is None or last.form == IAC_WAITER:
        described: dict[str, Any] = {"EndpointStatus": last.status}
        created = next((p.created for p in polls if p.created), None) or (min(observed) if observed else None)
        if created is not None:
            described["CreationTime"] = described["LastModifiedTime"] = created
            waited = max((p.elapsed_s for p in polls if p.elapsed_s is not None), default=None)
            if waited is not None and not observed:
                evidence.observed_at = created + timedelta(seconds=waited)
        if last.reason:
            described["FailureReason"] = last.reason
        evidence.endpoint = described
        evidence.notes.append(
            "endpoint facts come from the waiter's observations (it shows no ProductionVariants)"
        )


def creating_for(polls: list[Poll]) -> float | None:
    """Seconds the series shows the endpoint Creating since its creation (or first sight)."""
    creating = [p for p in polls if p.status == "Creating"]
    if not creating:
        return None
    spans = [p.elapsed_s for p in creating if p.elapsed_s is not None]
    starts = [p.created for p in polls if p.created] or [p.observed_at for p in polls if p.observed_at]
    ends = [p.observed_at for p in polls if p.observed_at]
    if starts and ends:
        spans.append((max(ends) - min(starts)).total_seconds())
    return max(spans) if spans else None


def stalled(polls: list[Poll], threshold_s: float) -> bool | None:
    """F06 over time: Creating with no instance, LastModifiedTime frozen, past the threshold."""
    if not polls:
        return None
    last = polls[-1]
    if (
        last.status == "InService"
        or any(p.variants for p in polls)
        or (last.status == "Failed" and last.reason)
    ):
        return False
    frozen = {p.last_modified for p in polls if p.status == "Creating" and p.last_modified}
    if len(frozen) > 1:
        return False
    waited = creating_for(polls)
    if waited is None:
        return None if last.status == "Failed" else False
    blind = all(p.variants is None for p in polls)
    return waited >= threshold_s * (IAC_STALL_FACTOR if blind else 1.0)
