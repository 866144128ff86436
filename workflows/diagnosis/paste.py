"""Evidence from pasted text: every form people paste, found and read in one text.

A user who asks "what failed?" has whatever they copied: a ``DescribeEndpoint`` or
``DescribeInferenceComponent`` JSON, a CloudWatch excerpt (with or without the lines around
it), a client traceback, a Step Functions error and cause, or several of these in one file.
Each form is found and read for what it carries:

- Describe* JSON becomes the structured context (status, variants, serverless config, copy
  counts, containers) the facts are computed from, and its FailureReason a ``describe`` text;
- a Step Functions error and cause (console text, ``describe-execution`` or execution history
  JSON, a Lambda error payload) becomes the caught error, with the failed state's phase;
- CloudWatch log lines become ``logs`` texts, a client traceback of InvokeEndpoint
  ``invocation`` texts; whatever is left stays ``text`` (read by every rule).

The forms found are listed in ``Evidence.forms``, in the order first seen.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

from workflows.diagnosis import ocr
from workflows.diagnosis.cli_queries import with_field_names
from workflows.diagnosis.dating import latest_date, recalled
from workflows.diagnosis.documents import (
    CLIENT_TRACEBACK,
    FORMS,
    SDK_NOTEBOOK,
    STATE_PHASES,
    STEP_FUNCTIONS,
    TEXT,
    Reading,
    Span,
    add_error,
    json_spans,
    read_document,
)
from workflows.diagnosis.documents import (
    DESCRIBE_ENDPOINT as DESCRIBE_ENDPOINT_FORM,
)
from workflows.diagnosis.evidence import ENDPOINT_POLLS, IAC_WAITER, Evidence, Poll, Source
from workflows.diagnosis.exports import LOG_EXPORT, csv_exports
from workflows.diagnosis.log_lines import LOG_LINE, PROMPT, log_lines, tail_lines
from workflows.diagnosis.machine_lines import is_machine_line
from workflows.diagnosis.polls import apply, from_describe, from_waiter_line, time_on
from workflows.diagnosis.records import find_records, unwrap_table_rows
from workflows.diagnosis.responses import add_answers
from workflows.diagnosis.stated_context import context_from_text

__all__ = ["FORMS", "evidence_from_paste"]

_STATE_NAME = re.compile(r"\b(" + "|".join(STATE_PHASES) + r")\b")

_TRACEBACK_START = re.compile(r"^\s*Traceback \(most recent call last\):")
_TRACEBACK_FRAME = re.compile(r"^\s+(?:File \"|\S)|^\s*$|^During handling|^The above exception")
# What makes a traceback or an exception line a client's InvokeEndpoint failure.
_INVOCATION = re.compile(
    r"InvokeEndpoint|invoke_endpoint|/invocations\b|sagemaker[-_]runtime|runtime\.sagemaker|"
    r"ModelError|ReadTimeoutError|ModelNotReadyException",
    re.IGNORECASE,
)
_CLIENT_ERROR_LINE = re.compile(
    r"^(?:botocore|boto3|sagemaker|urllib3|requests)[\w.]*(?:Error|Exception)\b|An error occurred \("
)
# A client's own error, wherever it is printed (a load tester's log line, a Lambda's log).
_QUOTE_MARK = re.compile(r'(?<!\\)"')
_CLIENT_CALL = re.compile(r"when calling the \w+ operation|botocore\.(?:exceptions|errorfactory)\.\w+")
# Step Functions console: "Error" and "Cause" as labels, on their own line or before the value.
_ERROR_LABEL = re.compile(r"^\s*\"?[Ee]rror\"?\s*[:=]?\s*\"?(?P<name>[A-Za-z][\w.]*)?\"?,?\s*$")
_CAUSE_LABEL = re.compile(r"^\s*\"?[Cc]ause\"?\s*[:=]?\s*(?P<rest>.*)$")
# A mail's or a thread's quote marks ("> ", "> > "): the line they frame is a reply's or a quoted message's own.
_MAIL_QUOTE = re.compile(r"^\s*(?:>\s?)+")
# Lines that only frame what follows: a shell prompt (a command's arguments, such as a
# log filter's pattern, are what was searched for, not what was found), a Logs Insights table's header and rule.
_FRAMING = re.compile(
    r"^\s*[│╷╵]\s*$|^\s*│\s+(?:with [\w.\[\]\"-]+,|on \S+ line \d+|\d+: )|"  # Terraform's diagnostic frame
    + PROMPT.pattern
    + r"|^\s*\|(?:\s*@\w+\s*\|)+\s*$|^\s*\|[-:| ]+\|\s*$"
    # A Logs Insights query, commented or not: what was searched for ("| parse @message /Worker died/").
    r"|^\s*(?:#\s*)?\|\s*(?:fields|filter|parse|stats|sort|limit|display|dedup|pattern|unmask)\s"
    # ... after its label ("쿼리: fields @timestamp, @message | filter ...", "Query: filter @message like /OOM/").
    r"|^\s*(?:#\s*)?(?:[^\s:|]{1,20}\s*:\s*)?(?:fields|filter|parse|stats)\s+@\w+"
)
_TIME_ONLY = re.compile(
    r"^\s*(?:#\s*)?(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d (?:UTC|GMT) \d{4}"
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?|\[?\d{1,2}:\d\d(?::\d\d)?\]?)\s*$"
)


# The SageMaker SDK's deploy(): a dash per poll, then "!" (InService) or "*" (failed); IPython's traceback
# header names the exception first ("UnexpectedStatusException   Traceback (most recent call last)").
_SDK_PROGRESS = re.compile(r"^\s*-{3,}[!*]\s*$")
_IPYTHON_HEADER = re.compile(
    r"^(?P<name>[A-Za-z_][\w.]*(?:Exception|Error))\s+Traceback \(most recent call last\)"
)
_SDK_EXCEPTION = re.compile(r"^\s*(?:sagemaker\.exceptions\.)?UnexpectedStatusException: (?P<message>.+)$")
_SDK_REASON = re.compile(
    r"Error hosting endpoint [\w-]+: (?P<status>\w+)\. Reason: (?P<reason>.*?)\.? Try changing"
)


def _sdk_notebook(reading: Reading) -> None:
    """A notebook's deploy(): its progress line, IPython's traceback, and the exception's message.

    The message quotes the endpoint's FailureReason ("Reason: ..."), read as a ``describe`` text too.
    """
    lines = reading.lines
    for index, line in enumerate(lines):
        if line is None:
            continue
        if _SDK_PROGRESS.match(line):
            lines[index] = None
            reading.at = index
            reading.found(SDK_NOTEBOOK)
        elif header := _IPYTHON_HEADER.match(line):
            end = next(
                (
                    i
                    for i in range(index + 1, len(lines))
                    if (lines[i] or "").startswith(header.group("name") + ":")
                ),
                None,
            )
            if end is None:
                continue
            start = index - 1 if index and re.fullmatch(r"\s*-{20,}\s*", lines[index - 1] or "") else index
            lines[start:end] = [None] * (end - start)
            reading.at = index
            reading.found(SDK_NOTEBOOK)
        elif exception := _SDK_EXCEPTION.match(line):
            message = exception.group("message")
            reading.add("text", line.strip(), index + 1)
            reason = _SDK_REASON.search(message)
            if reason and reason.group("reason").strip() not in ("", "None"):
                reading.add("describe", reason.group("reason"), f"{index + 1} FailureReason")
            lines[index] = None
            reading.at = index
            reading.found(SDK_NOTEBOOK)


def _step_functions_labels(reading: Reading, spans: dict[int, Span]) -> None:
    """The console's ``Error`` / ``Cause`` pair, each value on its label's line or the next.

    A cause that is a JSON document (a Lambda error payload) is taken from ``spans``.
    """
    lines = reading.lines
    for index, line in enumerate(lines):
        if line is None or not (label := _ERROR_LABEL.match(line)):
            continue
        name: str | None = label.group("name")
        name_at: int | None = index
        if name is None:
            name_at = _next_line(lines, index)
            name = (lines[name_at] or "").strip() if name_at is not None else None
        if not name or not re.fullmatch(r"[A-Za-z][\w.]*", name) or name_at is None:
            continue
        cause_at = _next_line(reading.original, name_at)
        cause = _CAUSE_LABEL.match(reading.original[cause_at]) if cause_at is not None else None
        if cause_at is None or cause is None:
            continue
        reading.at = index
        if cause_at in spans:  # "Cause: {...}": the payload is the JSON document on the label's line
            span = spans.pop(cause_at)
            add_error(reading, name, json.dumps(span.value))
            lines[index : span.last + 1] = [None] * (span.last + 1 - index)
            reading.found(STEP_FUNCTIONS)
            continue
        end = cause_at + 1
        text = cause.group("rest").strip()
        if not text and end in spans:
            span = spans.pop(end)
            text, end = json.dumps(span.value), span.last + 1
        else:
            while end < len(lines) and (lines[end] or "").strip():
                text, end = f"{text} {lines[end]}".strip(), end + 1
        add_error(reading, name, text)
        for consumed in range(index, end):
            lines[consumed] = None
        reading.found(STEP_FUNCTIONS)


def _next_line(lines: list[str | None] | list[str], index: int) -> int | None:
    for later in range(index + 1, len(lines)):
        if (lines[later] or "").strip():
            return later
    return None


def _tracebacks(reading: Reading) -> None:
    """Python tracebacks and bare client exception lines; InvokeEndpoint ones are ``invocation``."""
    lines = reading.lines
    index = 0
    while index < len(lines):
        line = lines[index]
        if line is not None and _TRACEBACK_START.match(line):
            end = index + 1
            while end < len(lines) and (lines[end] or "") and _TRACEBACK_FRAME.match(lines[end] or ""):
                end += 1
            if end < len(lines) and (lines[end] or "").strip() and not LOG_LINE.match(lines[end] or ""):
                end += 1  # the exception line
            while end < len(lines) and _open(lines[index:end]) and _continues(lines[end]):
                end += 1  # a message wrapped after it
            block = [(i, lines[i] or "") for i in range(index, end) if lines[i] is not None]
            _client_block(reading, block)
            for consumed in range(index, end):
                lines[consumed] = None
            index = end
            continue
        client = line is not None and (_CLIENT_ERROR_LINE.match(line.strip()) or _CLIENT_CALL.search(line))
        if line is not None and client:
            end = index + 1
            while end < len(lines) and _open(lines[index:end]) and _continues(lines[end]):
                end += 1
            _client_block(reading, [(i, lines[i] or "") for i in range(index, end)])
            lines[index:end] = [None] * (end - index)
            index = end
            continue
        index += 1


def _open(block: list[str | None]) -> bool:
    """The client's message is still open: botocore quotes the body (``with message "{ ... }"``), and a
    line after the closing quote is no longer part of it (a person's reply, the next paragraph). Before any
    quote, a line that ends in a colon wraps its quoted value onto the next (``Read timeout on endpoint
    URL:`` then ``"https://..."``)."""
    text = "\n".join(line or "" for line in block)
    quotes = len(_QUOTE_MARK.findall(text))
    return quotes % 2 == 1 or (quotes == 0 and text.rstrip().endswith(":"))


def _continues(line: str | None) -> bool:
    """A line that wraps the message above it (a ModelError's JSON body), not a new one."""
    if line is None or not line.strip() or LOG_LINE.match(line) or _TRACEBACK_START.match(line):
        return False
    return not (_CLIENT_ERROR_LINE.match(line.strip()) or _CLIENT_CALL.search(line))


def _client_block(reading: Reading, block: list[tuple[int, str]]) -> None:
    joined = "\n".join(text for _, text in block)
    source: Source = "invocation" if _INVOCATION.search(joined) else "text"
    for number, text in block:
        reading.add(source, text, number + 1)
    if len(block) > 1:
        reading.evidence.add(source, joined, origin=f"{reading.origin}:{block[0][0] + 1}", whole=True)
    reading.at = block[0][0]
    reading.found(CLIENT_TRACEBACK)


def _waiter_lines(reading: Reading, base: datetime | None) -> None:
    """Terraform, CDK and CloudFormation waiter lines: observations of the endpoint over time.

    Each line stays evidence (``text``, read by every rule): a waiter's error quotes the
    endpoint's FailureReason.
    """
    for index, line in enumerate(reading.lines):
        poll = from_waiter_line(line, base) if line is not None else None
        if poll is None or line is None:
            continue
        reading.waiter.append((index + 1, poll))
        reading.add("text", line.strip("│╷╵ "), index + 1)
        reading.lines[index] = None
        reading.at = index
        reading.found(IAC_WAITER)


def _series(reading: Reading, base: datetime | None) -> list[tuple[int, Poll]]:
    """Several describe-endpoint outputs of one endpoint: a poll series, each at the time written before it."""
    names = {str(value.get("EndpointName")) for _, value in reading.described}
    if len(reading.described) < 2 or len(names) > 1:
        return []
    polls: list[tuple[int, Poll]] = []
    previous = 0
    for number, value in reading.described:
        created = from_describe(value, None).created or base
        before = reading.original[previous : number - 1] + [reading.original[number - 1].split("{")[0]]
        polls.append((number, from_describe(value, time_on(before, created))))
        for index in range(previous, number - 1):  # a line that only says when the next poll was taken
            if reading.lines[index] is not None and _TIME_ONLY.match(reading.lines[index] or ""):
                reading.lines[index] = None
        previous = number
    first = reading.first_seen.pop(DESCRIBE_ENDPOINT_FORM, reading.described[0][0] - 1)
    reading.first_seen[ENDPOINT_POLLS] = first
    return polls


def _commands(lines: list[str | None]) -> dict[int, str]:
    """Each line of a shell command the paste ran, a prompt's line and the lines its trailing backslashes
    continue it on (a filter pattern there was searched for, not found), with the whole command."""
    found: dict[int, str] = {}
    index = 0
    while index < len(lines):
        if not (lines[index] and PROMPT.match(lines[index] or "")):
            index += 1
            continue
        end = index
        while (lines[end] or "").rstrip().endswith("\\") and end + 1 < len(lines) and lines[end + 1]:
            end += 1
        command = " ".join((line or "").strip().rstrip("\\").strip() for line in lines[index : end + 1])
        found.update(dict.fromkeys(range(index, end + 1), command))
        index = end + 1
    return found


def _recalled(evidence: Evidence, lines: list[str], observed_at: datetime | None) -> None:
    """Mark each person's line that dates itself weeks before the paste's latest date (``dating``)."""
    reference = latest_date(lines, observed_at)
    if reference is None:
        return
    evidence.items = [
        item.model_copy(update={"recalled": recalled(item.text, reference)})
        if item.prose and not item.whole
        else item
        for item in evidence.items
    ]


def evidence_from_paste(
    text: str, *, origin: str, hosting_mode: str | None = None, observed_at: datetime | None = None
) -> Evidence:
    """Evidence from pasted text of any form, or of several (see the module docstring).

    Args:
        text: what the user pasted or gave as a file.
        origin: where it came from (a file name), quoted with each line.
        hosting_mode: the hosting mode, when the user states it (``--mode``).
        observed_at: when a pasted Describe* output was taken (default: now).

    Returns:
        The evidence, with ``forms`` naming each form found.
    """
    evidence = Evidence(hosting_mode=hosting_mode, observed_at=observed_at)
    text = with_field_names(text)  # a --query's aliases ("s": "Failed") as the fields they stand for
    if ocr.signalled(text):
        text, changes = ocr.corrected(text)
        if changes:
            evidence.notes.append(f"read as OCR'd text, words put back: {', '.join(changes[:8])}")
    reading = Reading(evidence, origin, list(text.splitlines()), original=text.splitlines())
    spans = {span.first: span for span in json_spans(text)}
    for span in spans.values():
        reading.lines[span.first : span.last + 1] = [None] * (span.last + 1 - span.first)
    _step_functions_labels(reading, spans)
    for span in spans.values():
        reading.at = span.first
        read_document(reading, span.value, span.first + 1)
    for record in find_records(reading.lines):
        reading.at = record.span.first
        reading.found(record.form)
        read_document(reading, record.span.value, record.span.first + 1)
    unwrap_table_rows(reading.lines)
    for export in csv_exports(reading.lines):
        for row in export.rows:
            machine = is_machine_line(row.message)
            reading.add("logs" if machine else "text", row.message, row.number, prose=not machine)
        reading.lines[export.lines.start : export.lines.stop] = [None] * len(export.lines)
        reading.at = export.lines.start
        reading.found(LOG_EXPORT)
    base = time_on(text.splitlines(), None)
    _waiter_lines(reading, base)
    polls = sorted(_series(reading, base) + reading.waiter, key=lambda pair: pair[0])
    apply(evidence, [poll for _, poll in polls])
    _sdk_notebook(reading)
    _tracebacks(reading)
    tail_lines(reading)
    log_lines(reading)
    commands = _commands(reading.lines)
    rest = [
        (i, unquoted)
        for i, line in enumerate(reading.lines)
        if line
        and i not in commands
        and (unquoted := _MAIL_QUOTE.sub("", line)).strip()
        and not _FRAMING.match(unquoted)
    ]
    evidence.commands += list(dict.fromkeys(commands.values()))
    add_answers(reading, commands)
    for number, line in rest:
        reading.add("text", line, number + 1, prose=not is_machine_line(line))
    if rest:
        reading.at = rest[0][0]
        reading.found(TEXT)
    for source, texts in reading.blocks.items():
        # A message wrapped over several lines (botocore's ReadTimeoutError, a ModelError) still matches.
        if len(texts) > 1 and source != "invocation":
            joined = "\n".join(text for _, text in sorted(texts, key=lambda pair: pair[0]))
            evidence.add(source, joined, origin=origin, whole=True, prose=source in reading.prose)
    if evidence.phase is None and evidence.error_names:
        states = set(_STATE_NAME.findall(text))
        if len(states) == 1:
            evidence.phase = STATE_PHASES[states.pop()]
    context_from_text(evidence, text)
    _recalled(evidence, reading.original, observed_at)
    if reading.described and observed_at is None and not any(p.observed_at for p in evidence.polls):
        evidence.notes.append("the pasted DescribeEndpoint output is taken as observed now")
    evidence.forms = reading.forms
    return evidence
