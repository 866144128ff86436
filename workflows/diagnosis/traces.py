"""Evidence from an endpoint's traces log group: the requests SageMaker sampled, as the endpoint saw them.

An endpoint config with ``TracingConfig`` sends a share of its requests, with their request and response
payloads, to ``/aws/sagemaker/Endpoints/<endpoint>/traces`` (``workflows.hosting.tracing``). That is the
endpoint's own view of the calls a client made: the status each got, how long it took, and the body of each
error response, which is what a client's traceback quotes (``ModelError ... (500) ... message``).

botocore documents the log group and the payloads, not the layout of a trace record; so a record is read by
what it carries rather than by one schema: a JSON record's status code, latency and request id under the
names such records use (``statusCode``, ``latencyMs``, ``inferenceId`` ..., at its top or under
``request``/``response``), and its error body from the response's payload. A record that is not JSON is a
log line. The local SageMaker writes its sampled requests in that layout (``source:
deploybench-local-sagemaker``), so the same reader serves both.

Each error response becomes one ``invocation`` text (``InvokeEndpoint returned 500 in 12 ms: <body>``), the
source a client's InvokeEndpoint error is read from; the successful ones are counted into a note with the
latency they show, so a thousand 200s never drown the one 500.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from workflows.diagnosis.evidence import MAX_QUOTE, Evidence
from workflows.diagnosis.log_groups import group_events
from workflows.naming import endpoint_traces_log_group

if TYPE_CHECKING:
    from types_boto3_logs import CloudWatchLogsClient

TRACES = "endpoint-traces"
"""The form name of evidence read from a traces log group."""
# A CLI call, not a Lambda's: still bounded, so a busy endpoint's day of traces is never read whole.
MAX_TRACE_EVENTS = 5000
MAX_TRACE_PAGES = 50

_STATUS_KEYS = ("statuscode", "status_code", "httpstatuscode", "httpstatus", "responsecode", "status")
_LATENCY_MS_KEYS = (
    "latencyms",
    "latency_ms",
    "durationms",
    "duration_ms",
    "elapsedms",
    "latency",
    "duration",
)
_ID_KEYS = ("inferenceid", "inference_id", "requestid", "request_id", "traceid", "trace_id")
_BODY_KEYS = (
    "payload",
    "body",
    "responsepayload",
    "response_payload",
    "responsebody",
    "errormessage",
    "error",
)


@dataclass(frozen=True)
class TraceRecord:
    """One sampled request as its trace tells it; None where the record does not say."""

    status: int | None
    latency_ms: float | None
    body: str | None
    request_id: str | None
    error: bool = False
    """An error response: a 4xx/5xx status, or (with no status) an ``error`` the record names."""


def _lowered(value: dict[str, Any]) -> dict[str, Any]:
    return {str(key).lower(): item for key, item in value.items()}


def _first(record: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The first of ``keys`` with a value, at the record's top or under its response or request."""
    for where in (record, _lowered(record.get("response") or {}), _lowered(record.get("request") or {})):
        for key in keys:
            if where.get(key) not in (None, ""):
                return where[key]
    return None


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def trace_record(message: str) -> TraceRecord | None:
    """A trace log event's message as a record; None when it is not a JSON object."""
    try:
        parsed = json.loads(message)
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    record = _lowered(parsed)
    for side in ("response", "request"):
        if not isinstance(record.get(side), dict):
            record.pop(side, None)
    status = _number(_first(record, _STATUS_KEYS))
    response = _lowered(record.get("response") or {})
    named_error = next(
        (record[k] for k in ("errormessage", "error") if record.get(k) not in (None, "")), None
    )
    body = next((response[k] for k in _BODY_KEYS if response.get(k) not in (None, "")), named_error)
    request_id = _first(record, _ID_KEYS)
    code = int(status) if status is not None and 100 <= status < 600 else None
    return TraceRecord(
        status=code,
        latency_ms=_number(_first(record, _LATENCY_MS_KEYS)),
        body=_text(body),
        request_id=str(request_id) if request_id is not None else None,
        error=code >= 400 if code is not None else named_error is not None,
    )


def invocation_line(record: TraceRecord) -> str:
    """An error trace as the text a client's InvokeEndpoint error would quote."""
    status = f"returned {record.status}" if record.status is not None else "failed"
    took = f" in {record.latency_ms:.0f} ms" if record.latency_ms is not None else ""
    body = (record.body or "")[:MAX_QUOTE]
    return f"InvokeEndpoint {status}{took}: {body}".rstrip(": ")


@dataclass
class TraceTally:
    """What the traces read: every record's status and latency, for the note."""

    statuses: dict[str, int]
    latencies_ms: list[float]
    unparsed: int = 0

    def note(self, group: str) -> str:
        total = sum(self.statuses.values())
        by_status = ", ".join(f"{count} x {status}" for status, count in sorted(self.statuses.items()))
        latency = ""
        if self.latencies_ms:
            ordered = sorted(self.latencies_ms)
            latency = (
                f"; latency p50 {statistics.median(ordered):.0f} ms, max {ordered[-1]:.0f} ms "
                f"(n={len(ordered)})"
            )
        other = f"; {self.unparsed} not JSON, read as log lines" if self.unparsed else ""
        return f"traces {group}: {total} sampled requests ({by_status or 'no status'}){latency}{other}"


def add_trace_message(evidence: Evidence, message: str, *, origin: str, tally: TraceTally) -> None:
    """One trace log event: an error response as an ``invocation`` text, a success counted, a non-JSON
    message as a log line."""
    record = trace_record(message)
    if record is None:
        tally.unparsed += 1
        evidence.add("logs", message, origin=origin)
        return
    status = str(record.status) if record.status is not None else "?"
    tally.statuses[status] = tally.statuses.get(status, 0) + 1
    if record.latency_ms is not None:
        tally.latencies_ms.append(record.latency_ms)
    if record.error:
        where = f"{origin} {record.request_id}" if record.request_id else origin
        evidence.add("invocation", invocation_line(record), origin=where)


def add_trace_events(
    evidence: Evidence,
    *,
    logs: CloudWatchLogsClient,
    endpoint_name: str,
    since: datetime,
    until: datetime | None = None,
) -> int:
    """The endpoint's traces since ``since`` (oldest first, at most MAX_TRACE_EVENTS); returns how many.

    A group that does not exist, or a call that fails, is a note: tracing may be off for the endpoint.
    """
    group = endpoint_traces_log_group(endpoint_name)
    tally = TraceTally(statuses={}, latencies_ms=[])
    read = 0
    missing = "the endpoint traces nothing (its endpoint config has no TracingConfig; deploybench sets one with hosting.tracing)"
    for event in group_events(
        evidence,
        logs=logs,
        group=group,
        since=since,
        until=until,
        most=MAX_TRACE_EVENTS,
        pages=MAX_TRACE_PAGES,
        missing=missing,
    ):
        add_trace_message(
            evidence, str(event.get("message", "")), origin=str(event.get("logStreamName", "")), tally=tally
        )
        read += 1
    if read:
        evidence.notes.append(tally.note(group))
        if TRACES not in evidence.forms:
            evidence.forms.append(TRACES)
    elif not any(group in note for note in evidence.notes):
        evidence.notes.append(f"log group {group} has no traces since {since:%Y-%m-%d %H:%M:%S} UTC")
    return read
