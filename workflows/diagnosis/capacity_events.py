"""Evidence from capacity events: an endpoint's lifecycle as EventBridge and CloudTrail recorded it.

Where AWS records an endpoint's lifecycle, and so the failure to get an instance (the insufficient capacity
error, ICE), outside DescribeEndpoint (which ``deploybench diagnose --endpoint`` reads):

- EventBridge's ``SageMaker Endpoint State Change`` event (``source: aws.sagemaker``, one of the events
  AWS's guide lists SageMaker sending): the endpoint's fields at each change, named as DescribeEndpoint
  names them. Read as the project's envelope reader reads them (``envelopes._as_described``): a status in
  either case (``FAILED`` or ``Failed``), times in epoch milliseconds or ISO, and on a failure the
  ``FailureReason`` that DescribeEndpoint shows ("Unable to provision requested ML compute capacity", or
  empty after the capacity stall, F06); ``SageMaker Endpoint Deployment State Change`` carries an
  update's failure the same way. EventBridge keeps no history: a user has them where a rule delivered
  them (a file, a queue, a log group).
- CloudTrail's records of SageMaker's API calls (``lookup-events`` output, a trail file, or the
  LookupEvents API for the endpoint): a call SageMaker refused at once carries ``errorCode`` and
  ``errorMessage`` (``ResourceLimitExceeded``, the quota, F39). An endpoint's capacity failure happens
  after CreateEndpoint has returned, and no CloudTrail error code for it is documented; an
  ``InsufficientInstanceCapacity`` code, should a record carry one, is read as any other error.

Each state change becomes a ``Poll`` (the series the F06 facts read: Creating with no variants, then
Failed with an empty reason), applied as the endpoint's description when nothing better is known; each
FailureReason a ``describe`` text and each refused call an ``error`` text. Events of other endpoints are
skipped when the user names one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from workflows.aws.clients import error_code, error_message
from workflows.clock import as_datetime
from workflows.diagnosis.envelopes import CLOUDTRAIL, EVENT
from workflows.diagnosis.evidence import Evidence, Poll
from workflows.diagnosis.polls import apply, is_empty_reason
from workflows.diagnosis.shapes import fields

ENDPOINT_STATE_CHANGE = "SageMaker Endpoint State Change"
DEPLOYMENT_STATE_CHANGE = "SageMaker Endpoint Deployment State Change"
SAGEMAKER_SOURCE = "sagemaker.amazonaws.com"
# LookupEvents answers at most 50 events a page (botocore's MaxResults) and 2 calls a second per account.
LOOKUP_PAGE = 50
MAX_LOOKUP_PAGES = 20
_EPOCH_MS = 10**11


def _moment(value: Any) -> datetime | None:
    if isinstance(value, int | float) and value > _EPOCH_MS:
        return as_datetime(value / 1000)
    return as_datetime(value)


def _status(value: Any) -> str:
    """An event's status as DescribeEndpoint writes it: IN_SERVICE is InService."""
    text = str(value or "")
    return "".join(word.capitalize() for word in text.split("_")) if text.isupper() else text


def json_documents(text: str) -> Iterator[Any]:
    """Every JSON value in ``text``: one document (an event, a list, lookup-events output) or JSON lines."""
    try:
        yield json.loads(text)
        return
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    at = 0
    while at < len(text):
        start = min((i for i in (text.find("{", at), text.find("[", at)) if i >= 0), default=-1)
        if start < 0:
            return
        try:
            value, at = decoder.raw_decode(text, start)
        except ValueError:
            at = start + 1
            continue
        yield value


def _records(value: Any) -> Iterator[dict[str, Any]]:
    """EventBridge events and CloudTrail records in a document, however they are wrapped."""
    if isinstance(value, list):
        for item in value:
            yield from _records(item)
        return
    if not isinstance(value, dict):
        return
    if isinstance(value.get("Events"), list):  # lookup-events: CloudTrailEvent is a JSON string
        for event in value["Events"]:
            if isinstance(event, dict) and isinstance(event.get("CloudTrailEvent"), str):
                yield from _records(json.loads(event["CloudTrailEvent"]))
        return
    if isinstance(value.get("Records"), list):  # a trail file
        yield from _records(value["Records"])
        return
    if "detail-type" in value or "eventSource" in value:
        yield value


def _named(name: str | None, *candidates: Any) -> bool:
    return name is None or any(str(c or "").split("/")[-1] == name for c in candidates)


def add_state_change(evidence: Evidence, event: dict[str, Any], *, endpoint_name: str | None) -> Poll | None:
    """One EventBridge event of an endpoint: a poll for a state change, a ``describe`` text for a reason."""
    given = event.get("detail")
    detail: dict[str, Any] = given if isinstance(given, dict) else {}
    kind = str(event.get("detail-type") or "")
    if kind not in (ENDPOINT_STATE_CHANGE, DEPLOYMENT_STATE_CHANGE):
        return None
    if not _named(endpoint_name, detail.get("EndpointName"), *(event.get("resources") or [])):
        return None
    at = _moment(event.get("time"))
    reason = detail.get("FailureReason")
    origin = f"EventBridge {kind} {event.get('time') or ''}".strip()
    if not is_empty_reason(str(reason) if reason is not None else None):
        evidence.add("describe", str(reason), origin=f"{origin} FailureReason")
    if kind == DEPLOYMENT_STATE_CHANGE:
        return None
    return Poll(
        status=_status(detail.get("EndpointStatus")),
        observed_at=at,
        created=_moment(detail.get("CreationTime")),
        last_modified=_moment(detail.get("LastModifiedTime")),
        # An event that lists no variants says nothing about them: only a listed one is an assignment.
        variants=True if detail.get("ProductionVariants") else None,
        reason=None if is_empty_reason(str(reason) if reason is not None else None) else str(reason),
        form=EVENT,
    )


def add_trail_record(evidence: Evidence, record: dict[str, Any], *, endpoint_name: str | None) -> bool:
    """One CloudTrail record of a SageMaker call: its error as an ``error`` text; True when it was read."""
    if record.get("eventSource") != SAGEMAKER_SOURCE:
        return False
    parameters = fields(record.get("requestParameters"))
    named = parameters.get("endpointName") or parameters.get("endpointConfigName")
    arn = (
        (fields(record.get("responseElements")).get("endpointArn"))
        if record.get("responseElements")
        else None
    )
    if not _named(endpoint_name, named, arn):
        return False
    code = record.get("errorCode")
    if code:
        operation = str(record.get("eventName") or "")
        evidence.add(
            "error",
            f"An error occurred ({code}) when calling the {operation} operation: {record.get('errorMessage') or ''}",
            origin=f"CloudTrail {record.get('eventTime') or ''}".strip(),
        )
    return True


def add_capacity_events(
    evidence: Evidence, text: str, *, origin: str, endpoint_name: str | None = None
) -> int:
    """EventBridge events and CloudTrail records in ``text`` (a file's content); returns how many were read."""
    polls: list[Poll] = []
    trail = skipped = 0
    for document in json_documents(text):
        for record in _records(document):
            if "detail-type" in record:
                poll = add_state_change(evidence, record, endpoint_name=endpoint_name)
                if poll is not None:
                    polls.append(poll)
                elif str(record.get("detail-type")) != DEPLOYMENT_STATE_CHANGE:
                    skipped += 1
            elif add_trail_record(evidence, record, endpoint_name=endpoint_name):
                trail += 1
            else:
                skipped += 1
    _apply(evidence, polls)
    for form, count in ((EVENT, len(polls)), (CLOUDTRAIL, trail)):
        if count and form not in evidence.forms:
            evidence.forms.append(form)
    if skipped:
        evidence.notes.append(
            f"{origin}: {skipped} events skipped (not an endpoint state change or SageMaker call"
            + (f" of endpoint {endpoint_name})" if endpoint_name else ")")
        )
    return len(polls) + trail


def _apply(evidence: Evidence, polls: list[Poll]) -> None:
    """The state changes in time order, as the endpoint's observed series (``polls.apply``)."""
    ordered = sorted(polls, key=lambda p: (p.observed_at is None, p.observed_at or datetime.min))
    if ordered:
        apply(evidence, ordered)


def add_cloudtrail_events(evidence: Evidence, *, cloudtrail: Any, endpoint_name: str, since: datetime) -> int:
    """CloudTrail LookupEvents for the endpoint (ResourceName), read bounded; returns the SageMaker calls read.

    The API lists the newest first, page after page: the records are read back in the order they happened.
    """
    kwargs: dict[str, Any] = {
        "LookupAttributes": [{"AttributeKey": "ResourceName", "AttributeValue": endpoint_name}],
        "StartTime": since,
        "MaxResults": LOOKUP_PAGE,
    }
    raws: list[str] = []
    for _ in range(MAX_LOOKUP_PAGES):
        try:
            page = cloudtrail.lookup_events(**kwargs)
        except ClientError as error:
            evidence.notes.append(f"CloudTrail LookupEvents: {error_code(error)}: {error_message(error)}")
            break
        except BotoCoreError as error:
            evidence.notes.append(f"CloudTrail LookupEvents: {error}")
            break
        raws += [
            str(event["CloudTrailEvent"]) for event in page.get("Events", []) if event.get("CloudTrailEvent")
        ]
        token = page.get("NextToken")
        if not token:
            break
        kwargs["NextToken"] = token
    read = sum(
        add_trail_record(evidence, json.loads(raw), endpoint_name=endpoint_name) for raw in reversed(raws)
    )
    if read and CLOUDTRAIL not in evidence.forms:
        evidence.forms.append(CLOUDTRAIL)
    if not read:
        evidence.notes.append(
            f"CloudTrail has no SageMaker calls for {endpoint_name} since {since:%Y-%m-%d %H:%M} UTC"
        )
    return read
