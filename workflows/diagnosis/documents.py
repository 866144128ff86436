"""JSON documents in pasted evidence, and the reading they are collected into.

A pasted text may hold Describe* output, ``aws logs`` exports, Step Functions execution output or
history, and Lambda error payloads as JSON. Each document is told apart by the keys that name its
API and read for what it carries (see ``workflows.diagnosis.paste``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from workflows import clock
from workflows.contracts import ErrorInfo
from workflows.diagnosis.envelopes import ENVELOPES, open_envelope, parsed_json
from workflows.diagnosis.evidence import ENDPOINT_POLLS, IAC_WAITER, Evidence, Poll, Source
from workflows.diagnosis.exports import LOG_EXPORT
from workflows.diagnosis.machine_lines import is_machine_line
from workflows.diagnosis.outline import headings
from workflows.diagnosis.polls import from_stack_event
from workflows.diagnosis.shapes import fields, objects, text_field

DESCRIBE_ENDPOINT = "describe-endpoint"
DESCRIBE_ENDPOINT_CONFIG = "describe-endpoint-config"
DESCRIBE_MODEL = "describe-model"
DESCRIBE_COMPONENT = "describe-inference-component"
SCALABLE_TARGETS = "describe-scalable-targets"
STEP_FUNCTIONS = "step-functions-error"
LAMBDA_ERROR = "lambda-error"
CLOUDWATCH = "cloudwatch-log"
CLIENT_TRACEBACK = "client-traceback"
# The SageMaker Python SDK in a notebook: deploy()'s progress line, then its UnexpectedStatusException.
SDK_NOTEBOOK = "sagemaker-sdk"
# `aws logs tail` and `filter-log-events --output text`: the time and log stream before each event.
LOGS_TAIL = "logs-tail"
# Describe* records in the layouts other than JSON (workflows.diagnosis.records).
YAML_RECORD = "yaml-record"
CLI_TABLE = "cli-table"
CONSOLE_OCR = "console-ocr"
TEXT = "text"
FORMS = (
    DESCRIBE_ENDPOINT,
    ENDPOINT_POLLS,
    IAC_WAITER,
    DESCRIBE_ENDPOINT_CONFIG,
    DESCRIBE_MODEL,
    DESCRIBE_COMPONENT,
    SCALABLE_TARGETS,
    STEP_FUNCTIONS,
    LAMBDA_ERROR,
    CLOUDWATCH,
    CLIENT_TRACEBACK,
    SDK_NOTEBOOK,
    LOGS_TAIL,
    YAML_RECORD,
    CLI_TABLE,
    CONSOLE_OCR,
    LOG_EXPORT,
    *ENVELOPES,
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
    "PlaceInferenceComponents": "wait",
    "WaitForInferenceComponents": "wait",
    "WarmUpShapes": "warmup",
    "RunBenchmark": "benchmark",
    "StartBenchmarkJob": "benchmark",
    "DescribeBenchmarkJob": "benchmark",
    "TeardownEndpoint": "teardown",
}


@dataclass
class Reading:
    """What has been read so far: the evidence, the forms found, the lines not yet read."""

    evidence: Evidence
    origin: str
    lines: list[str | None]
    original: list[str] = field(default_factory=list)
    first_seen: dict[str, int] = field(default_factory=dict)
    at: int = 0
    # Each source's texts with the line each starts on: joined in the paste's order, whatever order the
    # readers took them in (a JSON body read before the lines around it).
    blocks: dict[Source, list[tuple[int, str]]] = field(default_factory=dict)
    # Sources that hold a line a person wrote: their whole (joined) text is read as prose too.
    prose: set[Source] = field(default_factory=set)
    # Each describe-endpoint output and the line it starts on (1-based); IaC waiter observations.
    described: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    waiter: list[tuple[int, Poll]] = field(default_factory=list)

    @cached_property
    def sections(self) -> list[str]:
        """For each line of the paste, the heading it sits under (``outline.headings``)."""
        return headings(self.original)

    def found(self, form: str) -> None:
        """``form`` is in the text, at line ``self.at`` (forms are listed in the order they appear)."""
        self.first_seen[form] = min(self.first_seen.get(form, self.at), self.at)

    @property
    def forms(self) -> list[str]:
        return sorted(self.first_seen, key=lambda form: self.first_seen[form])

    def add(
        self, source: Source, text: str, number: int | str, *, prose: bool = False, section: str = ""
    ) -> None:
        line = number if isinstance(number, int) else int(m.group()) if (m := re.match(r"\d+", number)) else 0
        # A line read by a reader of its own (a client's error quoted under "1. 지난달 이슈 후속") keeps its heading.
        if not section and isinstance(number, int) and 0 < number <= len(self.sections):
            section = self.sections[number - 1]
        self.evidence.add(source, text, origin=f"{self.origin}:{number}", prose=prose, section=section)
        self.blocks.setdefault(source, []).append((line, text))
        if prose:
            self.prose.add(source)


@dataclass(frozen=True)
class Span:
    """One JSON document: the lines it covers (first, last, 0-based) and its value."""

    first: int
    last: int
    value: Any


# The keys of an inference request's body (the HF toolkit's, vLLM's, TEI's): what was sent, not what was read.
_REQUEST_KEYS = {
    "inputs",
    "parameters",
    "input",
    "text",
    "text_pair",
    "text_1",
    "text_2",
    "instances",
    "queries",
}


def json_spans(text: str) -> list[Span]:
    """JSON documents in the text: each starts a line, or follows a short label (``Cause:``). A one-line object
    with words after it on its line is a part of that line, not a document."""
    decoder = json.JSONDecoder()
    spans: list[Span] = []
    end = 0
    # A document may follow a short label ("Cause:") or the time it was taken ("09:32", "[09:32:05]").
    for match in re.finditer(
        r"(?m)^[^\S\n]*(?:[A-Za-z ]{1,20}:[^\S\n]*|\[?\d{1,2}:\d\d(?::\d\d)?\]?[^\S\n]+)?[{\[]", text
    ):
        start = match.end() - 1
        if start < end:
            continue
        try:
            value, end_at = decoder.raw_decode(text, start)
        except ValueError:
            continue
        line_end = text.find("\n", end_at)
        rest = text[end_at : len(text) if line_end < 0 else line_end]
        if "\n" not in text[start:end_at] and re.search(r"\w", rest):
            continue  # an object inline in a sentence ("payload A: {...} -> p50 16 ms") is part of the line
        if isinstance(value, dict) and value and set(value) <= _REQUEST_KEYS:
            continue  # a request body ("payload B: {"inputs": [...]}") is the call described, not a record
        if isinstance(value, dict | list) and value:
            end = end_at
            spans.append(Span(text.count("\n", 0, start), text.count("\n", 0, end_at), value))
    return spans


def add_error(reading: Reading, name: str, cause: str) -> None:
    reading.evidence.add_error(ErrorInfo(Error=name, Cause=cause))


def _history(reading: Reading, events: list[Any], number: int) -> None:
    """An execution history: the failure events' error and cause, the last state entered before."""
    entered: str | None = None
    for event in events:
        if not isinstance(event, dict):
            continue
        entered = text_field(fields(event.get("stateEnteredEventDetails")).get("name")) or entered
        for details in (d for d in event.values() if isinstance(d, dict)):
            # A state's input and a task's output are JSON strings: a Describe* record inside is read as one.
            for text in (details.get(k) for k in ("input", "output")):
                nested = parsed_json(text)
                if isinstance(nested, dict | list):
                    read_document(reading, nested, number)
        for key, details in event.items():
            failure = key.endswith(("FailedEventDetails", "TimedOutEventDetails"))
            if failure and isinstance(details, dict) and details.get("error"):
                add_error(reading, str(details["error"]), str(details.get("cause") or ""))
                if entered in STATE_PHASES and reading.evidence.phase is None:
                    reading.evidence.phase = STATE_PHASES[entered]
    reading.found(STEP_FUNCTIONS)


def _envelope(reading: Reading, value: Any, number: int) -> bool:
    """An envelope's messages, in order: each text with who said it (on its origin), each document read."""
    opened = open_envelope(value)
    if opened is None:
        return False
    reading.found(opened.form)
    reading.evidence.settled = reading.evidence.settled or opened.settled
    for message in opened.messages:
        if message.document is not None:
            read_document(reading, message.document, number)
        else:
            said = f"{number} {message.speaker}".strip()
            reading.add(message.source, message.text, said, prose=message.prose)
    return True


def read_document(reading: Reading, value: Any, number: int) -> None:
    """One JSON document, by the keys that name its API, or the envelope it is (opened, then read)."""
    if _envelope(reading, value, number) or not isinstance(value, dict | list):
        return
    if isinstance(value, list):
        for element in value:
            if isinstance(element, str) and element.strip():  # a --query's values: ["Failed", "There is ..."]
                reading.add("text", element, number)
            else:
                read_document(reading, element, number)
        return
    events = value.get("events")
    if isinstance(events, list) and any(isinstance(e, dict) and "message" in e for e in events):
        for event in events:
            reading.add(
                "logs", str(event.get("message", "")), text_field(event.get("logStreamName")) or number
            )
        reading.found(CLOUDWATCH)
    elif isinstance(events, list) and any(isinstance(e, dict) and "type" in e for e in events):
        _history(reading, events, number)
    elif isinstance(value.get("StackEvents"), list):
        for event in reversed(value["StackEvents"]):  # CloudFormation lists the newest first
            poll = from_stack_event(event) if isinstance(event, dict) else None
            if poll is not None:
                reading.waiter.append((number, poll))
                if event.get("ResourceStatusReason"):
                    reading.add("describe", str(event["ResourceStatusReason"]), "ResourceStatusReason")
        reading.found(IAC_WAITER)
    elif "errorType" in value and "errorMessage" in value:
        add_error(reading, str(value["errorType"]), json.dumps(value))
        reading.found(LAMBDA_ERROR)
    elif ("error" in value or "Error" in value) and ("cause" in value or "Cause" in value):
        name = str(value.get("error") or value.get("Error") or "")
        add_error(reading, name, str(value.get("cause") or value.get("Cause") or ""))
        reading.found(STEP_FUNCTIONS)
    elif not _describe(reading, value, number):
        _unknown_api(reading, value, number)


def _unknown_api(reading: Reading, value: dict[str, Any], number: int) -> None:
    """An API this reader does not know: a Describe* record inside it is read as one ({"ic": {...}}, a state's
    input), and its texts still count."""
    for nested in _objects(value):
        _describe(reading, nested, number)
    for text in _strings(value):
        reading.add("text", text, number, prose=not is_machine_line(text))
    # Its numbers and flags by their keys, as a record's fields read ("MinInstanceCount: 0").
    for key, field_value in _scalars(value):
        reading.add(
            "text",
            f"{key}: {str(field_value).lower() if isinstance(field_value, bool) else field_value}",
            number,
        )
    reading.found(TEXT)


def _scalars(value: Any) -> list[tuple[str, int | float | bool]]:
    """A document's numbers and flags under their keys, at any depth."""
    if isinstance(value, dict):
        return [
            pair
            for key, inner in value.items()
            for pair in ([(key, inner)] if isinstance(inner, int | float | bool) else _scalars(inner))
        ]
    return [pair for inner in value for pair in _scalars(inner)] if isinstance(value, list) else []


_COPIES = {"DesiredCopyCount", "CurrentCopyCount"}
_REQUIREMENTS = {"NumberOfAcceleratorDevicesRequired", "MinMemoryRequiredInMb"}


def _unaliased(value: dict[str, Any]) -> dict[str, Any]:
    """A component's fields put back under their keys where a --query renamed them ('{s:InferenceComponentStatus,
    r:RuntimeConfig, spec:Specification.ComputeResourceRequirements}') or a table lifted them a level."""
    found = dict(value)
    for inner in value.values():
        if isinstance(inner, dict) and _COPIES & inner.keys():
            found.setdefault("RuntimeConfig", inner)
    for inner in (value, *[v for v in value.values() if isinstance(v, dict)]):
        lifted = inner.get("ComputeResourceRequirements")
        needs: dict[str, Any] = lifted if isinstance(lifted, dict) else inner
        if _REQUIREMENTS & needs.keys() and "Specification" not in value:
            found["Specification"] = {"ComputeResourceRequirements": needs}
    if "RuntimeConfig" in found and "InferenceComponentStatus" not in found:
        status = next((v for v in value.values() if v in _COMPONENT_STATUSES), None)
        if status:
            found["InferenceComponentStatus"] = status
    return found


_COMPONENT_STATUSES = ("InService", "Creating", "Updating", "Failed", "Deleting")


def _describe(reading: Reading, value: dict[str, Any], number: int) -> bool:
    """A Describe* output, by the keys that name its API; False when it is none of them."""
    evidence = reading.evidence
    if "EndpointStatus" not in value:
        value = _unaliased(value)
    if "EndpointStatus" in value:
        evidence.endpoint = value
        evidence.observed_at = evidence.observed_at or clock.now()
        reading.described.append((number, value))
        if value.get("FailureReason"):
            reading.add("describe", str(value["FailureReason"]), "FailureReason")
        reading.found(DESCRIBE_ENDPOINT)
    elif ("InferenceComponentName" in value or "InferenceComponentStatus" in value) and not {
        "RuntimeConfig",
        "InferenceComponentStatus",
    }.isdisjoint(value):  # a --query or a table may leave the name out
        evidence.inference_components.append(value)
        if value.get("FailureReason"):
            name = value.get("InferenceComponentName", "component")
            reading.add("describe", str(value["FailureReason"]), f"{name} FailureReason")
        reading.found(DESCRIBE_COMPONENT)
    elif "EndpointConfigName" in value and "ProductionVariants" in value:
        evidence.endpoint_config = value
        variants = objects(value.get("ProductionVariants")) or [{}]
        evidence.instance_type = evidence.instance_type or text_field(variants[0].get("InstanceType"))
        reading.found(DESCRIBE_ENDPOINT_CONFIG)
    elif "ModelName" in value and ("Containers" in value or "PrimaryContainer" in value):
        evidence.container_count = len(objects(value.get("Containers"))) or 1
        if "EnableNetworkIsolation" in value:  # the context of F37 (no package index from the container)
            shown = str(value["EnableNetworkIsolation"]).lower()
            reading.add("describe", f"EnableNetworkIsolation: {shown}", "EnableNetworkIsolation")
        reading.found(DESCRIBE_MODEL)
    elif isinstance(
        value.get("ScalableTargets"), list
    ):  # Application Auto Scaling's describe-scalable-targets
        evidence.scalable_targets = [*(evidence.scalable_targets or []), *value["ScalableTargets"]]
        reading.found(SCALABLE_TARGETS)
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


def _objects(value: Any) -> list[dict[str, Any]]:
    """The objects nested in a document, at any depth below its top."""
    children = list(value.values()) if isinstance(value, dict) else value if isinstance(value, list) else []
    found: list[dict[str, Any]] = []
    for child in children:
        if isinstance(child, dict):
            found.append(child)
        found += _objects(child)
    return found
