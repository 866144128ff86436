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
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from workflows import clock
from workflows.contracts import ErrorInfo
from workflows.diagnosis.evidence import Evidence, Source

DESCRIBE_ENDPOINT = "describe-endpoint"
DESCRIBE_ENDPOINT_CONFIG = "describe-endpoint-config"
DESCRIBE_MODEL = "describe-model"
DESCRIBE_COMPONENT = "describe-inference-component"
STEP_FUNCTIONS = "step-functions-error"
LAMBDA_ERROR = "lambda-error"
CLOUDWATCH = "cloudwatch-log"
CLIENT_TRACEBACK = "client-traceback"
TEXT = "text"
FORMS = (
    DESCRIBE_ENDPOINT,
    DESCRIBE_ENDPOINT_CONFIG,
    DESCRIBE_MODEL,
    DESCRIBE_COMPONENT,
    STEP_FUNCTIONS,
    LAMBDA_ERROR,
    CLOUDWATCH,
    CLIENT_TRACEBACK,
    TEXT,
)

# The deploy pipeline's task states and the step each runs (state_machines/deploy_pipeline.py).
STATE_PHASES = {
    "ConvertToOnnx": "convert",
    "PackArtifact": "pack",
    "RunPreflight": "preflight",
    "DeployEndpoint": "deploy",
    "DescribeEndpoint": "wait",
    "WaitForEndpoint": "wait",
    "WarmUpShapes": "warmup",
    "RunBenchmark": "benchmark",
    "StartBenchmarkJob": "benchmark",
    "DescribeBenchmarkJob": "benchmark",
    "TeardownEndpoint": "teardown",
}
_STATE_NAME = re.compile(r"\b(" + "|".join(STATE_PHASES) + r")\b")

# Line prefixes of the servers and exports whose output lands in /aws/sagemaker/Endpoints/<name>:
# MMS/TorchServe (2026-11-29T10:02:10,047 [INFO ]), a console or CLI export (ISO time or epoch ms,
# then a tab or a space), Logs Insights tables, Triton/glog (E1129 10:02:12.4), uvicorn and vLLM.
_LOG_LINE = re.compile(
    r"^\s*(?:\|\s*)?(?:"
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[,.]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s"
    r"|\d{13}\s"
    r"|[EIWF]\d{4} \d\d:\d\d:\d\d"
    r"|(?:INFO|WARNING|ERROR|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d"
    r"|(?:INFO|WARNING|ERROR):\s{2,}"
    r"|\((?:APIServer|EngineCore\w*) pid=\d+\)"
    r"|\[(?:INFO|WARN|ERROR|DEBUG) ?\]"
    r")"
)
_TRACEBACK_START = re.compile(r"^\s*Traceback \(most recent call last\):")
_TRACEBACK_FRAME = re.compile(r"^\s+(?:File \"|\S)|^\s*$|^During handling|^The above exception")
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Timeout|Warning)\b(?::|$)")
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
_CLIENT_CALL = re.compile(r"when calling the \w+ operation|botocore\.(?:exceptions|errorfactory)\.\w+")
# Step Functions console: "Error" and "Cause" as labels, on their own line or before the value.
_ERROR_LABEL = re.compile(r"^\s*\"?[Ee]rror\"?\s*[:=]?\s*\"?(?P<name>[A-Za-z][\w.]*)?\"?,?\s*$")
_CAUSE_LABEL = re.compile(r"^\s*\"?[Cc]ause\"?\s*[:=]?\s*(?P<rest>.*)$")
_SERVERLESS_MARK = re.compile(r"ServerlessConfig|MemorySizeInMB|\bmode: ?serverless\b")
_COHOST_MARK = re.compile(r"TargetContainerHostname|InferenceExecutionConfig|\"Mode\": ?\"Direct\"")
_PROMPT = re.compile(r"^\s*(?:\$|>|PS [^>]*>) ")
_INSTANCE_TYPE = re.compile(r"(?<![\w.])ml\.[a-z0-9]+\.(?:\d*xlarge|large|medium|small|metal)\b")


@dataclass
class _Reading:
    """What has been read so far: the evidence, the forms found, the lines not yet read."""

    evidence: Evidence
    origin: str
    lines: list[str | None]
    original: list[str] = field(default_factory=list)
    first_seen: dict[str, int] = field(default_factory=dict)
    at: int = 0
    blocks: dict[Source, list[str]] = field(default_factory=dict)

    def found(self, form: str) -> None:
        """``form`` is in the text, at line ``self.at`` (forms are listed in the order they appear)."""
        self.first_seen[form] = min(self.first_seen.get(form, self.at), self.at)

    @property
    def forms(self) -> list[str]:
        return sorted(self.first_seen, key=lambda form: self.first_seen[form])

    def add(self, source: Source, text: str, number: int | str) -> None:
        self.evidence.add(source, text, origin=f"{self.origin}:{number}")
        self.blocks.setdefault(source, []).append(text)


@dataclass(frozen=True)
class _Span:
    """One JSON document: the lines it covers (first, last, 0-based) and its value."""

    first: int
    last: int
    value: Any


def _json_spans(text: str) -> list[_Span]:
    """JSON documents in the text: each starts a line, or follows a short label (``Cause:``)."""
    decoder = json.JSONDecoder()
    spans: list[_Span] = []
    end = 0
    for match in re.finditer(r"(?m)^[^\S\n]*(?:[A-Za-z ]{1,20}:[^\S\n]*)?[{\[]", text):
        start = match.end() - 1
        if start < end:
            continue
        try:
            value, end_at = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict | list) and value:
            end = end_at
            spans.append(_Span(text.count("\n", 0, start), text.count("\n", 0, end_at), value))
    return spans


def _add_error(reading: _Reading, name: str, cause: str) -> None:
    reading.evidence.add_error(ErrorInfo(Error=name, Cause=cause))


def _history(reading: _Reading, events: list[Any]) -> None:
    """An execution history: the failure events' error and cause, the last state entered before."""
    entered: str | None = None
    for event in events:
        if not isinstance(event, dict):
            continue
        entered = (event.get("stateEnteredEventDetails") or {}).get("name") or entered
        for key, details in event.items():
            failure = key.endswith(("FailedEventDetails", "TimedOutEventDetails"))
            if failure and isinstance(details, dict) and details.get("error"):
                _add_error(reading, str(details["error"]), str(details.get("cause") or ""))
                if entered in STATE_PHASES and reading.evidence.phase is None:
                    reading.evidence.phase = STATE_PHASES[entered]
    reading.found(STEP_FUNCTIONS)


def _document(reading: _Reading, value: Any, number: int) -> None:
    """One JSON document, by the keys that name its API."""
    if isinstance(value, list):
        for element in value:
            _document(reading, element, number)
        return
    if not isinstance(value, dict):
        return
    events = value.get("events")
    if isinstance(events, list) and any(isinstance(e, dict) and "message" in e for e in events):
        for event in events:
            reading.add("logs", str(event.get("message", "")), event.get("logStreamName") or number)
        reading.found(CLOUDWATCH)
    elif isinstance(events, list) and any(isinstance(e, dict) and "type" in e for e in events):
        _history(reading, events)
    elif "errorType" in value and "errorMessage" in value:
        _add_error(reading, str(value["errorType"]), json.dumps(value))
        reading.found(LAMBDA_ERROR)
    elif ("error" in value or "Error" in value) and ("cause" in value or "Cause" in value):
        name = str(value.get("error") or value.get("Error") or "")
        _add_error(reading, name, str(value.get("cause") or value.get("Cause") or ""))
        reading.found(STEP_FUNCTIONS)
    elif not _describe(reading, value):
        # An API this reader does not know: its texts still count.
        for text in _strings(value):
            reading.add("text", text, number)
        reading.found(TEXT)


def _describe(reading: _Reading, value: dict[str, Any]) -> bool:
    """A Describe* output, by the keys that name its API; False when it is none of them."""
    evidence = reading.evidence
    if "EndpointStatus" in value:
        evidence.endpoint = value
        evidence.observed_at = evidence.observed_at or clock.now()
        if value.get("FailureReason"):
            reading.add("describe", str(value["FailureReason"]), "FailureReason")
        reading.found(DESCRIBE_ENDPOINT)
    elif "InferenceComponentName" in value and not {"RuntimeConfig", "InferenceComponentStatus"}.isdisjoint(
        value
    ):
        evidence.inference_components.append(value)
        if value.get("FailureReason"):
            reading.add(
                "describe", str(value["FailureReason"]), f"{value['InferenceComponentName']} FailureReason"
            )
        reading.found(DESCRIBE_COMPONENT)
    elif "EndpointConfigName" in value and "ProductionVariants" in value:
        evidence.endpoint_config = value
        variants = value.get("ProductionVariants") or [{}]
        evidence.instance_type = evidence.instance_type or variants[0].get("InstanceType")
        reading.found(DESCRIBE_ENDPOINT_CONFIG)
    elif "ModelName" in value and ("Containers" in value or "PrimaryContainer" in value):
        evidence.container_count = len(value.get("Containers") or [value.get("PrimaryContainer")])
        reading.found(DESCRIBE_MODEL)
    else:
        return False
    return True


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _step_functions_labels(reading: _Reading, spans: dict[int, _Span]) -> None:
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
            _add_error(reading, name, json.dumps(span.value))
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
        _add_error(reading, name, text)
        for consumed in range(index, end):
            lines[consumed] = None
        reading.found(STEP_FUNCTIONS)


def _next_line(lines: list[str | None] | list[str], index: int) -> int | None:
    for later in range(index + 1, len(lines)):
        if (lines[later] or "").strip():
            return later
    return None


def _tracebacks(reading: _Reading) -> None:
    """Python tracebacks and bare client exception lines; InvokeEndpoint ones are ``invocation``."""
    lines = reading.lines
    index = 0
    while index < len(lines):
        line = lines[index]
        if line is not None and _TRACEBACK_START.match(line):
            end = index + 1
            while end < len(lines) and (lines[end] or "") and _TRACEBACK_FRAME.match(lines[end] or ""):
                end += 1
            while end < len(lines) and (lines[end] or "").strip() and not _LOG_LINE.match(lines[end] or ""):
                end += 1  # the exception line, and a message wrapped after it
            block = [(i, lines[i] or "") for i in range(index, end) if lines[i] is not None]
            _client_block(reading, block)
            for consumed in range(index, end):
                lines[consumed] = None
            index = end
            continue
        client = line is not None and (_CLIENT_ERROR_LINE.match(line.strip()) or _CLIENT_CALL.search(line))
        if line is not None and client:
            end = index + 1
            while end < len(lines) and _continues(lines[end]):
                end += 1
            _client_block(reading, [(i, lines[i] or "") for i in range(index, end)])
            lines[index:end] = [None] * (end - index)
            index = end
            continue
        index += 1


def _continues(line: str | None) -> bool:
    """A line that wraps the message above it (a ModelError's JSON body), not a new one."""
    if line is None or not line.strip() or _LOG_LINE.match(line) or _TRACEBACK_START.match(line):
        return False
    return not (_CLIENT_ERROR_LINE.match(line.strip()) or _CLIENT_CALL.search(line))


def _client_block(reading: _Reading, block: list[tuple[int, str]]) -> None:
    joined = "\n".join(text for _, text in block)
    source: Source = "invocation" if _INVOCATION.search(joined) else "text"
    for number, text in block:
        reading.add(source, text, number + 1)
    if len(block) > 1:
        reading.evidence.add(source, joined, origin=f"{reading.origin}:{block[0][0] + 1}", whole=True)
    reading.at = block[0][0]
    reading.found(CLIENT_TRACEBACK)


def _log_lines(reading: _Reading) -> None:
    """CloudWatch lines, and the unprefixed lines that continue them (a banner, a worker's traceback)."""
    in_log = False
    for index, line in enumerate(reading.lines):
        if line is None:
            in_log = False
            continue
        if _LOG_LINE.match(line):
            in_log = True
        elif not in_log or not line.strip():
            in_log = in_log and bool(line.strip())
            continue
        reading.add("logs", line, index + 1)
        reading.lines[index] = None
        reading.at = index
        reading.found(CLOUDWATCH)


def _context_from_text(evidence: Evidence, text: str) -> None:
    """Context a text states in passing: a serverless config, co-hosted containers, one instance type."""
    if evidence.hosting_mode is None and _SERVERLESS_MARK.search(text):
        evidence.hosting_mode = "serverless"
    if evidence.container_count is None and _COHOST_MARK.search(text):
        evidence.container_count = 2
    types = set(_INSTANCE_TYPE.findall(text))
    if evidence.instance_type is None and len(types) == 1:
        evidence.instance_type = types.pop()


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
    reading = _Reading(evidence, origin, list(text.splitlines()), original=text.splitlines())
    spans = {span.first: span for span in _json_spans(text)}
    for span in spans.values():
        reading.lines[span.first : span.last + 1] = [None] * (span.last + 1 - span.first)
    _step_functions_labels(reading, spans)
    for span in spans.values():
        reading.at = span.first
        _document(reading, span.value, span.first + 1)
    _tracebacks(reading)
    _log_lines(reading)
    # A shell prompt line only says which command printed what follows.
    rest = [
        (i, line) for i, line in enumerate(reading.lines) if line and line.strip() and not _PROMPT.match(line)
    ]
    for number, line in rest:
        reading.add("text", line, number + 1)
    if rest:
        reading.at = rest[0][0]
        reading.found(TEXT)
    for source, texts in reading.blocks.items():
        # A message wrapped over several lines (botocore's ReadTimeoutError, a ModelError) still matches.
        if len(texts) > 1 and source != "invocation":
            evidence.add(source, "\n".join(texts), origin=origin, whole=True)
    if evidence.phase is None and evidence.error_names:
        states = set(_STATE_NAME.findall(text))
        if len(states) == 1:
            evidence.phase = STATE_PHASES[states.pop()]
    _context_from_text(evidence, text)
    if evidence.endpoint is not None and observed_at is None:
        evidence.notes.append("the pasted DescribeEndpoint output is taken as observed now")
    evidence.forms = reading.forms
    return evidence
