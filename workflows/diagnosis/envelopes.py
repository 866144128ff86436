"""JSON that wraps the evidence: audit trails, notifications, incidents and chats, opened to their messages.

What people paste is often one envelope around the text that matters, or several nested:

- CloudTrail ``lookup-events`` (``Events[].CloudTrailEvent`` is itself a JSON string) and trail files
  (``Records[]``): each call's operation, error code and message, and who made it;
- EventBridge events (``detail-type`` / ``detail``), alone or in an SNS notification (``Message`` is a
  JSON string) or an SQS message (``Body``), as the queue or a Lambda's event gives them;
- incident webhooks: PagerDuty (v3 ``event.data``, v2 ``messages[]``, the Events API ``payload``) and
  Opsgenie (``alert``), with the notes people add;
- chat: a Slack export (a list of messages, or ``messages[]``), replies kept after their thread's start;
- Datadog log exports (the Logs API's ``data[].attributes``, the UI export's ``content``).

Each envelope is opened into ``Message`` objects in the order they happened: a nested document (read
again by ``documents.read_document``, so an EventBridge ``detail`` is a Describe* record like any
other) or a text with who said it and whether a person wrote it (prose is read for negation).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from workflows.clock import as_datetime
from workflows.diagnosis.evidence import Source
from workflows.diagnosis.machine_lines import is_machine_line
from workflows.diagnosis.shapes import fields, objects

CLOUDTRAIL = "cloudtrail-events"
EVENT = "eventbridge-event"
NOTIFICATION = "sns-sqs-message"
INCIDENT = "incident-webhook"
CHAT = "chat-export"
DATADOG = "datadog-logs"
ENVELOPES = (CLOUDTRAIL, EVENT, NOTIFICATION, INCIDENT, CHAT, DATADOG)

# EventBridge carries SageMaker's timestamps as epoch milliseconds; the Describe* APIs as seconds or ISO.
_EPOCH_MS = 10**11


@dataclass(frozen=True)
class Message:
    """One thing an envelope holds: a nested document, or a text and who said it."""

    text: str = ""
    document: Any = None
    speaker: str = ""
    source: Source = "text"
    prose: bool = False


@dataclass
class Opened:
    form: str
    messages: list[Message] = field(default_factory=list)
    settled: str = ""  # the incident tool's word that the alert resolved or closed


def parsed_json(text: Any) -> Any:
    """A JSON string's value, or None when it is not one."""
    if not isinstance(text, str) or not text.lstrip().startswith(("{", "[")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _said(text: Any, speaker: str = "", *, software: bool = False) -> list[Message]:
    """A text as a message: its JSON document when it holds one (or its lines and the document among them),
    else prose unless software wrote it. A
    mapping of texts (PagerDuty's custom details, {"note": "..."}) is each of its texts; one with more than
    texts is a document."""
    if isinstance(text, dict) and text:
        if all(isinstance(value, str) for value in text.values()):
            return [m for value in text.values() for m in _said(value, speaker, software=software)]
        return [Message(document=text, speaker=speaker)]
    if not isinstance(text, str) or not text.strip():
        return []
    document = parsed_json(text)
    if document is not None:
        return [Message(document=document, speaker=speaker)]
    lines = text.splitlines()
    for index, line in enumerate(lines):  # a document among the lines: a watchdog's snapshot, a pasted record
        if index and line.lstrip().startswith("{"):
            rest = "\n".join(lines[index:])
            try:
                document, end = json.JSONDecoder().raw_decode(rest, len(rest) - len(rest.lstrip()))
            except ValueError:
                continue
            if isinstance(document, dict) and document:
                after = rest[end:].lstrip("\n")
                return (
                    _said("\n".join(lines[:index]), speaker, software=software)
                    + [Message(document=document, speaker=speaker)]
                    + _said(after, speaker, software=software)
                )
    prose = not software and not is_machine_line(text)
    return [Message(text=line, speaker=speaker, prose=prose) for line in lines if line.strip()]


def _as_described(key: str, value: Any) -> Any:
    """An event's field as the Describe* API writes it: epoch seconds, statuses in CamelCase (IN_SERVICE)."""
    if key.endswith("Time") and isinstance(value, int) and value > _EPOCH_MS:
        return value / 1000
    if key.endswith("Status") and isinstance(value, str) and value.isupper():
        return "".join(word.capitalize() for word in value.split("_"))
    return value


def _epoch_times(detail: dict[str, Any]) -> dict[str, Any]:
    return {key: _as_described(key, value) for key, value in detail.items()}


def _trail_event(record: dict[str, Any]) -> list[Message]:
    identity = fields(record.get("userIdentity"))
    speaker = str(identity.get("arn") or identity.get("userName") or record.get("Username") or "")
    operation = str(record.get("eventName") or "")
    code = record.get("errorCode")
    if not code:
        return [Message(text=f"{operation} succeeded", speaker=speaker)]
    message = str(record.get("errorMessage") or "")
    return [
        Message(
            text=f"An error occurred ({code}) when calling the {operation} operation: {message}",
            speaker=speaker,
        )
    ]


# A CloudTrail event's top-level string fields, read one by one where a writer elided part of the event ("...") and
# it no longer parses as JSON.
_TRAIL_FIELD = re.compile(
    r'"(?P<key>eventName|eventSource|eventTime|errorCode|errorMessage)"\s*:\s*"(?P<value>(?:[^"\\]|\\.)*)"'
)


def _trail_fields(text: Any) -> dict[str, Any]:
    """A lookup-events entry's CloudTrailEvent: its JSON document, or the fields still readable in an elided one."""
    if isinstance(parsed := parsed_json(text), dict):
        return parsed
    if not isinstance(text, str):
        return {}
    return {found["key"]: found["value"].replace('\\"', '"') for found in _TRAIL_FIELD.finditer(text)}


def _cloudtrail(value: dict[str, Any]) -> Opened | None:
    events = value.get("Events")
    if isinstance(events, list) and any(isinstance(e, dict) and "CloudTrailEvent" in e for e in events):
        records = [
            {
                "Username": e.get("Username"),
                "eventName": e.get("EventName"),
                **_trail_fields(e.get("CloudTrailEvent")),
            }
            for e in events
            if isinstance(e, dict)
        ]
    elif isinstance(value.get("Records"), list) and any(
        isinstance(r, dict) and "eventSource" in r for r in value["Records"]
    ):
        records = [r for r in value["Records"] if isinstance(r, dict)]
    elif "eventSource" in value and "eventName" in value:
        records = [value]
    else:
        return None
    records.sort(
        key=lambda record: str(record.get("eventTime") or "")
    )  # lookup-events lists the newest first
    return Opened(CLOUDTRAIL, [m for record in records for m in _trail_event(record)])


def _event(value: dict[str, Any]) -> Opened | None:
    if "detail-type" not in value or not isinstance(value.get("detail"), dict):
        return None
    detail = _epoch_times(value["detail"])
    return Opened(EVENT, [Message(text=str(value["detail-type"])), Message(document=detail)])


def _notification(value: dict[str, Any]) -> Opened | None:
    bodies: list[Any] = []
    if value.get("Type") == "Notification" and "Message" in value:
        bodies = [value.get("Subject"), value["Message"]]
    elif isinstance(value.get("Messages"), list):
        bodies = [m.get("Body") for m in value["Messages"] if isinstance(m, dict)]
    elif isinstance(value.get("Records"), list):
        for record in value["Records"]:
            if isinstance(record, dict) and isinstance(record.get("Sns"), dict):
                bodies += [record["Sns"].get("Subject"), record["Sns"].get("Message")]
            elif isinstance(record, dict) and "body" in record:
                bodies.append(record["body"])
    if not bodies:
        return None
    return Opened(NOTIFICATION, [m for body in bodies for m in _said(body, software=True)])


def _agent(value: Any) -> str:
    return (
        str((value or {}).get("summary") or (value or {}).get("name") or "")
        if isinstance(value, dict)
        else ""
    )


# An alert raised on purpose: a drill's title tag ("[TEST] game day: ...") or its tags ("test", "gameday").
_EXERCISE_TITLE = re.compile(r"^\s*\[(?:TEST|DRILL|GAME ?DAY)\]", re.IGNORECASE)
_EXERCISE_TAGS = {"test", "drill", "gameday", "game-day", "exercise", "chaos"}


def _exercise(title: Any, tags: Any) -> str:
    """Why the alert is an exercise, not an incident (its title's tag, or its tags), or empty."""
    if isinstance(title, str) and (tag := _EXERCISE_TITLE.match(title)):
        return f"an exercise, titled {tag.group().strip()}"
    named = sorted(_EXERCISE_TAGS & {str(t).lower() for t in tags}) if isinstance(tags, list) else []
    return f"an exercise, tagged {', '.join(named)}" if named else ""


def _incident(value: dict[str, Any]) -> Opened | None:
    messages: list[Message] = []
    settled = ""
    event = value.get("event")
    if (
        isinstance(event, dict) and isinstance(event.get("data"), dict) and "event_type" in event
    ):  # PagerDuty v3
        data, speaker = event["data"], _agent(event.get("agent"))
        if event.get("event_type") == "incident.resolved" or data.get("status") == "resolved":
            settled = "PagerDuty: incident.resolved"
        messages += _said(data.get("title"), speaker, software=True)
        body = data.get("body") if isinstance(data.get("body"), dict) else {}
        messages += _said(body.get("details"))  # the incident's body: a monitor's text or a responder's note
        messages += _said(data.get("content"), speaker)  # incident.annotated: a person's note
    elif isinstance(value.get("messages"), list) and any(
        isinstance(m, dict) and "incident" in m for m in value["messages"]
    ):  # PagerDuty v2
        for message in objects(value["messages"]):
            incident = fields(message.get("incident"))
            if message.get("event") == "incident.resolve" or incident.get("status") == "resolved":
                settled = "PagerDuty: incident.resolve"
            messages += _said(incident.get("title") or incident.get("summary"), software=True)
            for entry in objects(message.get("log_entries")):
                channel = fields(entry.get("channel"))
                speaker = _agent(entry.get("agent"))
                messages += _said(channel.get("details") or channel.get("summary"), speaker)
    elif isinstance(value.get("payload"), dict) and "event_action" in value:  # PagerDuty Events API
        payload = value["payload"]
        messages += _said(payload.get("summary"), str(payload.get("source") or ""), software=True)
        messages += [
            m for v in fields(payload.get("custom_details")).values() for m in _said(v, software=True)
        ]
    elif isinstance(value.get("alert"), dict) and "action" in value:  # Opsgenie
        alert = value["alert"]
        if value.get("action") == "Close" or alert.get("status") == "closed":
            settled = "Opsgenie: Close"
        elif exercise := _exercise(alert.get("message"), alert.get("tags")):
            settled = f"Opsgenie: {exercise}"
        speaker = str(alert.get("username") or "")
        messages += _said(alert.get("message"), software=True)
        messages += _said(alert.get("description"), software=True)
        details = alert.get("details") if isinstance(alert.get("details"), dict) else {}
        messages += [m for v in details.values() for m in _said(v, software=True)]  # its custom properties
        messages += _said(alert.get("note"), speaker)
        messages += _said(value.get("note"))  # a responder's note written beside the alert when it was pasted
    else:
        return None
    return Opened(INCIDENT, messages, settled)


def _slack_message(message: dict[str, Any]) -> list[Message]:
    bot = bool(message.get("bot_id")) or message.get("subtype") == "bot_message"
    speaker = str(message.get("user_name") or message.get("username") or message.get("user") or "")
    said = _said(message.get("text"), speaker, software=bot)
    for attachment in message.get("attachments") or []:
        if isinstance(attachment, dict):
            said += _said(attachment.get("text") or attachment.get("fallback"), speaker, software=True)
    return said


def _chat(value: Any) -> Opened | None:
    messages = value.get("messages") if isinstance(value, dict) else value
    if not isinstance(messages, list) or not messages:
        return None
    if not all(isinstance(m, dict) and "ts" in m and ("text" in m or "attachments" in m) for m in messages):
        return None

    def order(message: dict[str, Any]) -> tuple[float, float]:
        # A reply follows its thread's first message; conversations.history lists the newest first.
        return _stamp(message.get("thread_ts") or message["ts"]), _stamp(message["ts"])

    try:
        ordered = sorted(messages, key=order)
    except ValueError:  # a stamp that is neither Slack's seconds nor ISO 8601: keep the export's order
        ordered = messages
    return Opened(CHAT, [m for message in ordered for m in _slack_message(message)])


def _stamp(value: Any) -> float:
    """A chat message's time in seconds: Slack's "1731571337.000200", or an ISO 8601 time as some
    exporters write it ("2026-10-11T08:14:02"); ValueError for anything else."""
    try:
        return float(value)
    except (TypeError, ValueError):
        moment = as_datetime(str(value))
    if moment is None:
        raise ValueError(f"not a message time: {value!r}")
    return moment.timestamp()


def _datadog(value: Any) -> Opened | None:
    rows = value.get("data") if isinstance(value, dict) else value
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        return None
    found = [r.get("attributes") if r.get("type") == "log" else r.get("content") for r in rows]
    if not all(isinstance(f, dict) and "message" in f for f in found):
        return None
    logs = sorted((f for f in found if isinstance(f, dict)), key=lambda f: str(f.get("timestamp") or ""))
    return Opened(
        DATADOG,
        [
            Message(
                text=str(f["message"]), speaker=str(f.get("service") or f.get("host") or ""), source="logs"
            )
            for f in logs
        ],
    )


def open_envelope(value: Any) -> Opened | None:
    """The envelope ``value`` is, opened; None when it is none of them."""
    for reader in (_chat, _datadog):
        opened = reader(value)
        if opened is not None:
            return opened
    if not isinstance(value, dict):
        return None
    for dict_reader in (_cloudtrail, _event, _notification, _incident):
        opened = dict_reader(value)
        if opened is not None:
            return opened
    return None
