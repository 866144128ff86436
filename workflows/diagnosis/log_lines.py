"""Log lines in a paste: CloudWatch events as the servers wrote them, and ``aws logs`` output.

Moved from ``workflows.diagnosis.paste``, which calls these readers in its order of forms.
"""

from __future__ import annotations

import re

from workflows.diagnosis.documents import CLOUDWATCH, LOGS_TAIL, Reading
from workflows.diagnosis.machine_lines import is_machine_line

# Line prefixes of the servers and exports whose output lands in /aws/sagemaker/Endpoints/<name>:
# MMS/TorchServe (2026-11-29T10:02:10,047 [INFO ]), a console or CLI export (ISO time or epoch ms,
# then a tab or a space), Logs Insights tables, Triton/glog (E1129 10:02:12.4), uvicorn and vLLM.
LOG_LINE = re.compile(
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
# `aws logs tail` (time, log stream, message) and `aws logs filter-log-events --output text` (EVENTS rows).
_TAIL_LINE = re.compile(
    r"^(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?) "
    r"(?P<stream>[\w.-]+/[\w./\[\]$-]+) (?P<message>.*)$"
)
_EVENTS_ROW = re.compile(r"^EVENTS\t[^\t]*\t\d+\t(?P<stream>[^\t]+)\t(?P<message>.*)\t\d+\s*$")


# A comment a person put into a pasted log ("# checked: no OOM", "// note", "-- note").
_COMMENT = re.compile(r"^\s*(?:#|//|--\s)")
# What continues a log event on lines of its own: an indented line (a traceback's frames), a banner
# or table (===, |, *), a Java frame ("at ...", "Caused by:"), a Python exception's qualified name.
# A shell prompt: the command after it was run ("$ ", bash's "user@host:~/dir$ ", a virtualenv's "(env) $ ",
# PowerShell's; IPython's shell escape, "In [4]: !aws ...", is one).
PROMPT = re.compile(r"^\s*(?:\(\S+\)\s*)?(?:\$|PS [^>]*>|[\w.-]+@[\w.-]+:[^\s$#]*[$#]) |^\s*In \[\d*\]:\s*!")
# A person's aside in parentheses after a log ("(neither Catch branch was taken ...)"), when no software wrote it.
# ... or a list's next item, a bullet and a word ("- no error 803 in the log"): the notes the log was pasted into.
_ASIDE = re.compile(r"^\s*\(|^[-*•]\s+\w")
_CONTINUATION = re.compile(r"^(?:\s|[^\w\s]|at\s|Caused by:|Traceback\b|[a-z_]\w*(?:\.\w+)+:)")


def tail_lines(reading: Reading) -> None:
    """``aws logs`` output: the time and log stream stripped, so the event is read as the server wrote it."""
    in_tail, stream = False, ""
    for index, line in enumerate(reading.lines):
        row = (_TAIL_LINE.match(line) or _EVENTS_ROW.match(line)) if line is not None else None
        # A shell prompt's line ends the output ("$ # Worker died 0건 ...": the person's note, or the next command),
        # and so does a person's sentence or aside after it ("three containers on one ml.m5.large. No OOM."), as in
        # ``log_lines``: only what continues an event (a traceback's frames) stays the event's.
        if row is None and not (
            in_tail
            and line
            and line.strip()
            and not LOG_LINE.match(line)
            and not PROMPT.match(line)
            and ((_CONTINUATION.match(line) and not _ASIDE.match(line)) or is_machine_line(line))
        ):
            in_tail = False
            continue
        if row is not None:
            in_tail = True
            stream, message = row.group("stream"), row.group("message")
        else:
            message = line or ""  # a line that continues the event above (a traceback in one event)
        reading.add("logs", message, f"{index + 1} {stream}")
        reading.lines[index] = None
        reading.at = index
        reading.found(LOGS_TAIL)


def log_lines(reading: Reading) -> None:
    """CloudWatch lines, and the unprefixed lines that continue them (a banner, a worker's traceback)."""
    in_log = False
    for index, line in enumerate(reading.lines):
        if line is None:
            in_log = False
            continue
        if LOG_LINE.match(line):
            in_log = True
        elif _COMMENT.match(line):  # "# reviewer note: ..." between log lines is a person's, read as prose
            in_log = False
            continue
        elif not in_log or not line.strip():
            in_log = in_log and bool(line.strip())
            continue
        elif (
            not _CONTINUATION.match(line) or _ASIDE.match(line) or PROMPT.match(line)
        ) and not is_machine_line(line):
            in_log = False  # a person's sentence or aside after the log ("InService in 6 min."): prose
            continue
        reading.add("logs", line, index + 1)
        reading.lines[index] = None
        reading.at = index
        reading.found(CLOUDWATCH)
