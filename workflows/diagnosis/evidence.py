"""What a diagnosis looks at: texts by source, plus the structured facts around them.

Sources:
- ``error``: the caught error (Step Functions ``Error`` and the Lambda error payload in ``Cause``);
- ``describe``: Describe* output (FailureReason and the like);
- ``logs``: the endpoint's CloudWatch log events (``/aws/sagemaker/Endpoints/<name>``);
- ``invocation``: client errors from InvokeEndpoint (ModelError, ReadTimeoutError...);
- ``text``: text of unknown origin (``deploybench diagnose --log FILE``): every rule applies;
- ``preflight``: the message of a PreflightBlocked error (predictions, not observations).

Texts are normalised before matching (escapes undone, ANSI colours removed, whitespace runs
collapsed), so a signature written with single spaces matches a message that a log export
wrapped, indented or JSON-escaped.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from workflows.contracts import ErrorInfo
from workflows.errors import PreflightBlocked

Source = Literal["error", "describe", "logs", "invocation", "text", "preflight"]
# What rules read unless they name their sources: observations of a failure. A preflight finding
# quotes the message a failure *would* show; only the rule for the preflight's own error reads it.
SOURCES: tuple[Source, ...] = ("error", "describe", "logs", "invocation", "text")

# Step Functions caps a state's input/output at 256 KiB: a diagnosis quotes lines, never dumps them.
MAX_QUOTE = 400

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# JSON \uXXXX escapes, however many times the backslash was escaped on the way: MMS writes its
# error bodies with Gson, which escapes ' < > = & (``No module named \u0027onnxruntime\u0027``).
_UNICODE_ESCAPE = re.compile(r"\\+u([0-9a-fA-F]{4})")
_ESCAPED_QUOTE = re.compile(r"\\+(['\"])")
_ESCAPED_SPACE = re.compile(r"\\+[nrt]")
_WHITESPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """One line, single spaces, no escapes: the form every signature is written against."""
    text = _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), _ANSI.sub("", text))
    text = _ESCAPED_SPACE.sub(" ", text)
    text = _ESCAPED_QUOTE.sub(r"\1", text)
    return _WHITESPACE.sub(" ", text).strip()


ENDPOINT_POLLS = "endpoint-polls"
IAC_WAITER = "iac-waiter"


class Poll(BaseModel):
    """One observation of the endpoint."""

    model_config = ConfigDict(extra="forbid")

    status: str
    observed_at: datetime | None = None
    elapsed_s: float | None = Field(None, description="Seconds since the create, as a waiter counts them.")
    created: datetime | None = None
    last_modified: datetime | None = None
    variants: bool | None = Field(None, description="ProductionVariants present; None when not shown.")
    reason: str | None = None
    form: str = ENDPOINT_POLLS


class EvidenceItem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Source
    text: str = Field(description="Normalised text (see normalize).")
    origin: str = Field("", description="Where it came from: a log stream, an API call, a file.")
    whole: bool = Field(
        False, description="The whole of a multi-line text, read only where no single line matches."
    )
    prose: bool = Field(
        False,
        description="Written by a person (a ticket, a chat, a note), not by software: a mention in it may "
        "be negated, asked or past (workflows.diagnosis.polarity).",
    )
    section: str = Field(
        "", description="The heading a person's line sits under (workflows.diagnosis.outline): its context."
    )
    recalled: str = Field(
        "",
        description="Why a person's line recalls the past by the date it states (workflows.diagnosis.dating), "
        "or empty: its mentions are then no evidence of the failure now.",
    )

    @classmethod
    def of(
        cls,
        source: Source,
        text: str,
        origin: str = "",
        *,
        whole: bool = False,
        prose: bool = False,
        section: str = "",
    ) -> EvidenceItem:
        return cls(
            source=source,
            text=normalize(text),
            origin=origin,
            whole=whole,
            prose=prose,
            section=normalize(section),
        )


class Evidence(BaseModel):
    """Everything known about one failure. Unknown context stays ``None``: rules that depend on
    it are then weighed down, not dropped (see matcher)."""

    model_config = ConfigDict(extra="forbid")

    items: list[EvidenceItem] = Field(default_factory=list)
    error_names: list[str] = Field(
        default_factory=list, description="Step Functions error name and the payload's errorType."
    )
    phase: str | None = Field(None, description="Pipeline step that failed: convert, pack, deploy, ...")
    hosting_mode: str | None = None
    instance_type: str | None = None
    image: str | None = None
    expected_architecture: str | None = Field(None, description="The architecture the run converted (F26).")
    endpoint: dict[str, Any] | None = Field(None, description="DescribeEndpoint output, when available.")
    endpoint_config: dict[str, Any] | None = Field(None, description="DescribeEndpointConfig output.")
    inference_components: list[dict[str, Any]] = Field(default_factory=list)
    scalable_targets: list[Any] | None = Field(
        None,
        description="Application Auto Scaling's scalable targets, where the paste shows the list (even empty).",
    )
    container_count: int | None = Field(None, description="Containers of the endpoint's model (co-hosting).")
    instance_id: str | None = Field(
        None, description="An EC2 instance the endpoint ran on (a log stream is <variant>/<instance-id>)."
    )
    stall_threshold_s: float = Field(600.0, description="Creating with no instance this long is a stall.")
    observed_at: datetime | None = Field(None, description="When the Describe* output was taken.")
    polls: list[Poll] = Field(
        default_factory=list, description="The endpoint observed over time (pasted polls, an IaC waiter)."
    )
    notes: list[str] = Field(
        default_factory=list, description="What could not be collected, and why (no log group, ...)."
    )
    settled: str = Field(
        "",
        description="An incident tool's own word that the alert resolved or closed (PagerDuty's incident.resolved, "
        "Opsgenie's Close): what it quotes is a settled matter, or empty.",
    )
    commands: list[str] = Field(
        default_factory=list,
        description="Shell commands the paste shows (``$ cat code/requirements.txt``): what was run or searched "
        "for, never a finding; they say what the output under them is.",
    )
    logs_read: list[str] = Field(
        default_factory=list,
        description="Container log groups this tool read itself (a run's diagnosis, --endpoint): a line they "
        "lack is then evidence too, as a pasted excerpt's is not.",
    )
    forms: list[str] = Field(
        default_factory=list, description="Forms found in pasted evidence (workflows.diagnosis.paste.FORMS)."
    )

    def add(
        self,
        source: Source,
        text: str,
        origin: str = "",
        *,
        whole: bool = False,
        prose: bool = False,
        section: str = "",
    ) -> None:
        """Add one text if it says anything."""
        item = EvidenceItem.of(source, text, origin, whole=whole, prose=prose, section=section)
        if item.text:
            self.items.append(item)

    def add_error(self, error: ErrorInfo) -> None:
        """The caught error: its name, and its Cause (the Lambda error payload, when it is one)."""
        self.error_names.append(error.Error)
        source: Source = "preflight" if error.Error == PreflightBlocked.__name__ else "error"
        payload = parse_cause(error.Cause)
        if payload is None:
            self.add(source, f"{error.Error}: {error.Cause}", origin="Cause")
            return
        error_type = str(payload.get("errorType") or "")
        if error_type and error_type not in self.error_names:
            self.error_names.append(error_type)
        message = str(payload.get("errorMessage") or "")
        self.add(source, f"{error_type or error.Error}: {message}", origin="Cause.errorMessage")
        trace = payload.get("stackTrace")
        if isinstance(trace, list) and trace:
            self.add(source, " ".join(str(frame) for frame in trace), origin="Cause.stackTrace")


def parse_cause(cause: str) -> dict[str, Any] | None:
    """A Lambda error reaches Step Functions as ``Cause = json({"errorType", "errorMessage", ...})``;
    other causes (a Fail state, States.Timeout) are plain text."""
    try:
        payload = json.loads(cause)
    except (TypeError, ValueError):
        return None
    return payload if isinstance(payload, dict) and "errorMessage" in payload else None


def quote(text: str, start: int, end: int) -> str:
    """The matched fragment with some context around it, at most MAX_QUOTE characters."""
    room = max(0, (MAX_QUOTE - (end - start)) // 2)
    left, right = max(0, start - room), min(len(text), end + room)
    return ("…" if left else "") + text[left:right] + ("…" if right < len(text) else "")
