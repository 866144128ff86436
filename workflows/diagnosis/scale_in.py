"""A scale-in timeline: how long after the last request the copies or the instances reached zero (F13).

Engineers who wonder why a scale-to-zero endpoint still bills write the timeline down: the last request's time,
then the times the copies and the instances went to zero, from a poll loop's table or a list of DescribeEndpoint
and DescribeInferenceComponent readings ("02:00:10  last request", "02:13:40  CurrentCopyCount 1 -> 0",
"10:27  InService  0  0  0"). Target tracking's scale-in alarm waits about 15 minutes below target before the
copies go, and the instances follow minutes later, so zero reached SLOW_MINUTES or more after the last request
is that wait. Zero never reached is F11's, not this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workflows.diagnosis.tables import pipe_cells

SLOW_MINUTES = 15.0

# ... or the minutes and seconds since the stop: "t+13:40"; a list's bullet may lead ("- 14:10 CurrentCopyCount 1").
_TIME = re.compile(
    r"^\s*(?:[-*•]\s+)?(?:(?:\d{4}-\d\d-\d\d[T ])?(?P<h>\d{1,2}):(?P<m>\d\d)(?::(?P<s>\d\d))?(?:\.\d+)?Z?"
    r"|[tT]\s*\+\s*(?P<em>\d{1,3}):(?P<es>\d\d))\b"
)
_STOP = re.compile(
    r"\blast (?:request|invocation|call)\b|\btraffic (?:stop|stopp?ed|ends?|ended)\b|\bstops? here\b"
    r"|\b(?:load test|load generator|load|batch|traffic|requests) (?:stops?|stopped|ends?|ended|done|finished)\b"
    r"|마지막\s*(?:요청|호출)|\bInvocations\s*(?:[:=]|==|->|→)?\s*0(?![\d.])"
    # ... in English words with a Korean verb: "load test 종료".
    r"|\b(?:load test|load|traffic|requests?)\s*(?:종료|중단|중지|끝)"
    # ... the time inside the words: "트래픽 14:00 에 끊음".
    r"|(?:트래픽|부하|테스트)(?:은|는|이|가)?\s*\d{1,2}:\d\d(?::\d\d)?\s*(?:에|부터)?\s*(?:끊|중단|중지|종료|끝|멈)"
    r"|(?:트래픽|부하|요청)\s*(?:테스트\s*)?(?:종료|중단|중지|끊|끝)",
    re.IGNORECASE,
)
# ... or a line that says the traffic stopped and then when ("Annotations: traffic stopped 2026-11-30 02:00:00Z").
_TIME_AFTER = re.compile(
    r"(?<![\d:])(?:\d{4}-\d\d-\d\d[T ])?(?P<h>\d{1,2}):(?P<m>\d\d)(?::(?P<s>\d\d))?(?![\d:])"
)
# Several timed events on one line, each after a comma: "14:13 CurrentCopyCount 1 -> 0, 14:27 CurrentInstanceCount 1 -> 0".
_EVENTS = re.compile(r"[,;.]\s+(?=\d{1,2}:\d\d\b)")
_TO_ZERO = re.compile(
    r"(?:->|→|⇒|=>)\s*0\b"
    # ... or a count named at zero in a poll's line ("14:13:30  copies 0  instances 1", "instances: 0").
    r"|\b(?:copies|CurrentCopyCount|CopyCount|instances|CurrentInstanceCount|InstanceCount|(?:instance|copy) count)\s*"
    r"(?:[:=]|hit|reached|went to|dropped to|fell to)?\s*0(?![\d.])",
    re.IGNORECASE,
)
_ZERO_AT = re.compile(
    r"(?<![\d:])(?P<h>\d{1,2}):(?P<m>\d\d)(?::(?P<s>\d\d))?\s*(?:에야|에서야|에|쯤)\s*(?:다\s*)?0\s*(?:으로|이|가)?\s*"
    r"(?:됐|되었|됨|떨어|내려)"
)
_HELD_UNTIL = re.compile(
    r"\buntil\s+(?P<h>\d{1,2}):(?P<m>\d\d)(?::(?P<s>\d\d))?\b[^.\n]{0,12}?\bthen\s+(?:(?:to|down to)\s+)?0\b",
    re.IGNORECASE,
)
_COUNT_HEADER = re.compile(
    r"instance|copies|copy|ic_current|ic_desired|CopyCount|InstanceCount", re.IGNORECASE
)
_MINUTES_HEAD = re.compile(
    r"(?:t|time|elapsed|minute|min)?\s*\(?(?:min|minutes?|분)\)?|t\s*\+\s*min", re.IGNORECASE
)
_INTEGER = re.compile(r"(?<![\w.:-])\d+(?![\w.:])")


@dataclass(frozen=True)
class ScaleIn:
    """The last request's line, the last line that shows zero, and the minutes between them."""

    stop: str
    zero: str
    minutes: float


def clock_seconds(found: re.Match[str]) -> float:
    """A clock's match (groups h, m and s; or em and es, minutes and seconds since a start) in seconds."""
    if found.groupdict().get("em"):
        return int(found["em"]) * 60 + int(found["es"])
    return int(found.group("h")) * 3600 + int(found.group("m")) * 60 + int(found.group("s") or 0)


def timeline(lines: list[str]) -> ScaleIn | None:
    """The scale-in the lines time, where they give the last request and a later zero."""
    stop: tuple[float, str] | None = None
    zero: tuple[float, str] | None = None
    counted = False  # under a header that names the instance or copy counts
    minutes = False  # under a header whose first column counts minutes from the start ("| t (min) | event |")
    for line in (part for whole in lines for part in _EVENTS.split(whole)):
        # A Markdown table's row: its cells, in order ("| 14:00:00 | traffic stop | 1 |").
        cells = pipe_cells(line) if line.count("|") >= 2 else []
        if cells and all(re.fullmatch(r":?-{2,}:?", cell) for cell in cells):
            continue  # a Markdown table's rule under its header
        if cells:
            line = " ".join(cells)
        elapsed = cells and minutes and re.fullmatch(r"\d+(?:\.\d+)?", cells[0])
        at = _TIME.match(line)
        said = _STOP.search(line) if at is None and not elapsed and stop is None else None
        # Its time inside the words ("트래픽 14:00 에 끊겼는데"), else after them, else anywhere from them.
        if said and (
            when := _TIME_AFTER.search(line, said.start(), said.end())
            or _TIME_AFTER.search(line, said.end())
            or _TIME_AFTER.search(line, said.start())
        ):
            stop = (clock_seconds(when), line.strip())
            # ... and zero in the same sentence after it: "traffic stopped 02:00, CopyCount hit 0 at 02:33".
            rest = line[when.end() :]
            # The last of them: "CurrentCopyCount went 1 -> 0 at 14:14, instance count 1 -> 0 at 14:28".
            for down in _TO_ZERO.finditer(rest):
                then = _TIME_AFTER.search(rest, down.end())
                if then and clock_seconds(then) > stop[0]:
                    zero = (clock_seconds(then), line.strip())
            # ... or the time before the zero, as Korean puts it: "copy 가 14:31 에야 0 됐어요", or as the count held until
            # then: "CurrentCopyCount stayed 1 until 14:33 UTC, then 0".
            for then in (*_ZERO_AT.finditer(rest), *_HELD_UNTIL.finditer(rest)):
                if clock_seconds(then) > stop[0]:
                    zero = (clock_seconds(then), line.strip())
            continue
        # ... or an event whose time follows it ("IC copies 1 -> 0       14:13").
        after = _TIME_AFTER.search(line) if at is None and not elapsed and _TO_ZERO.search(line) else None
        if stop is not None and after and clock_seconds(after) > stop[0]:
            zero = (clock_seconds(after), line.strip())
            continue
        if at is None and not elapsed:
            counted = bool(_COUNT_HEADER.search(line)) and not _INTEGER.search(line)
            minutes = bool(cells) and bool(_MINUTES_HEAD.fullmatch(cells[0]))
            continue
        if at is not None:
            seconds, rest = clock_seconds(at), line[at.end() :]
        else:
            seconds, rest = float(cells[0]) * 60, " ".join(cells[1:])
        if _STOP.search(rest) and stop is None:
            stop = (seconds, line.strip())
            continue
        numbers = [int(n) for n in _INTEGER.findall(rest)]
        all_zero = counted and numbers and not any(numbers)
        if stop is not None and seconds > stop[0] and (_TO_ZERO.search(rest) or all_zero):
            zero = (seconds, line.strip())
    if stop is None or zero is None:
        return None
    return ScaleIn(stop[1], zero[1], (zero[0] - stop[0]) / 60)


def slow_scale_in(lines: list[str]) -> ScaleIn | None:
    """The timeline where zero came SLOW_MINUTES or more after the last request."""
    found = timeline(lines)
    return found if found and found.minutes >= SLOW_MINUTES else None
