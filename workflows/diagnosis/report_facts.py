"""Facts a report's own figures give where no error does: a list run one by one (F31), short samples that hid the
cost of long inputs (F32), a scale-in that reached zero half an hour after the last request (F13), a pack at
gzip's default or top level timed in tens of seconds (F24), an optimizer pass started and still running after
minutes (F34), a p99 far above the rest of its run (F16, F33), a first call in seconds before calls in milliseconds
(F18, F21), a call answered after a read timeout (F14 against F15). Each is read
from the paste's lines (``batching``, ``scale_in``, ``latency``) and shown with the lines that decide it."""

from __future__ import annotations

import re
from collections.abc import Callable

from workflows.diagnosis.batch_verdicts import hidden_by_samples, one_by_one
from workflows.diagnosis.call_columns import call_column_first_cold
from workflows.diagnosis.endpoint_kind import serverless
from workflows.diagnosis.evidence import Evidence, EvidenceItem
from workflows.diagnosis.latency import (
    MAX_WARM_MS,
    MIN_COLD_S,
    cold_first_calls,
    first_call_column_cold,
    first_call_seconds,
    first_invocation_cold,
    later_calls_millis,
    numbered_first_cold,
    runs,
    tail_gone_after_warmup,
    worst_tail,
)
from workflows.diagnosis.mentions import reading_of
from workflows.diagnosis.scale_in import slow_scale_in
from workflows.diagnosis.worker_loading import workers_loading_in_run


def report_lines(evidence: Evidence) -> list[str]:
    """The paste's lines, each once (a wrapped message's joined whole left out)."""
    return [item.text for item in evidence.items if not item.whole]


def cold_tail(evidence: Evidence) -> bool | None:
    """A latency report's p99 stands ten times over its p90 and past a second (``latency``), or fell tenfold from
    past a second when measured again after a longer warm-up, or a worker finished loading after the run began: it
    measured cold starts or loading workers. None where no run's percentiles are given."""
    lines = report_lines(evidence)
    if tail_gone_after_warmup(lines) or workers_loading_in_run(lines):
        return True
    found = runs(lines)
    return any(run.tail for run in found) if found else None


def report_rows(evidence: Evidence) -> list[str]:
    """The lines a report's rows can be: what was pasted as text, not a server's log lines."""
    return [item.text for item in evidence.items if not item.whole and item.source == "text"]


def list_one_by_one(evidence: Evidence) -> bool | None:
    """A report's list sent without batch_size took about as long as its inputs one at a time."""
    return True if one_by_one(report_rows(evidence)) else None


def short_samples_hide(evidence: Evidence) -> bool | None:
    """A report's natural-length samples ran far faster than the same batch padded."""
    return True if hidden_by_samples(report_rows(evidence)) else None


def scaled_in_slowly(evidence: Evidence) -> bool | None:
    """A timeline shows zero reached 15 minutes or more after the last request."""
    return True if slow_scale_in(report_lines(evidence)) else None


# A shell command that compresses at gzip's default or top level (tar -z, gzip, pigz; not -1 or --fast), and
# the `time` builtin's wall clock after it.
_COMPRESSING = re.compile(r"\b(?:gzip|pigz)\b|\btar\s+-?[a-y]*z[a-y]*\b|compresslevel\s*=\s*9|GZIP=-9")
_FAST = re.compile(r"\s-1\b|\s--fast\b|compresslevel\s*=\s*[01]\b")
_REAL = re.compile(r"^real\s+(?:(?P<m>\d+)m)?(?P<s>\d+(?:\.\d+)?)s\s*$")
SLOW_PACK_S = 30.0


def compressed_slowly(evidence: Evidence) -> bool | None:
    """A command the paste ran compressed at gzip's default or top level, and `time` gave SLOW_PACK_S or more."""
    if not any(_COMPRESSING.search(c) and not _FAST.search(c) for c in evidence.commands):
        return None
    for line in report_lines(evidence):
        if (real := _REAL.match(line.strip())) and (
            int(real.group("m") or 0) * 60 + float(real.group("s")) >= SLOW_PACK_S
        ):
            return True
    return None


# Olive's log: an optimizer pass that started ("Running pass opt:OrtTransformersOptimization") and no line after it
# that says it finished ("Pass opt:OrtTransformersOptimization finished in 86.49 seconds").
# A log may name the pass by its type alone ("Running pass OrtTransformersOptimization"): the type is its name then.
# onnxruntime's own optimizer run as a command ("python -m onnxruntime.transformers.optimizer --input ...") starts it
# as well; it says nothing when it finishes but writes its output, so only the time shown tells.
_PASS_STARTED = re.compile(
    r"Running (?:pass )?(?:[\w.-]+:)?(?P<name>\w*[Oo]ptimi[sz]\w*)|-m\s+(?P<module>onnxruntime\.transformers\.optimizer)\b"
)
_PASS_FINISHED = re.compile(r"Pass (?:[\w.-]+:)?(?P<name>\w+) finished")
# The time since, as the paste tells it: a person's "21분 경과", "20분째", "for 25 min", "25 minutes in".
_MINUTES_SAID = re.compile(
    r"(?P<m>\d{1,3})\s*분\s*(?:째|경과|넘게|이상|동안|지나)|\b(?:for|after|running|elapsed:?)\s+(?P<en>\d{1,3})\s*min"
    r"|\b(?P<in>\d{1,3})\s*min(?:ute)?s?\s+(?:in|elapsed|later|and counting|ago)\b",
    re.IGNORECASE,
)
# ... in hours: "3시간 넘게", "still running after 5.5h", "for 3 hours".
_HOURS_SAID = re.compile(
    r"(?P<ko>\d{1,2}(?:\.\d)?)\s*시간\s*(?:째|경과|넘게|이상|동안|지나)"
    r"|\b(?:for|after|running|elapsed:?)\s+(?P<en>\d{1,2}(?:\.\d)?)\s*(?:h|hrs?|hours?)\b",
    re.IGNORECASE,
)
# ... or `ps`'s ELAPSED and `top`'s TIME+ for the process on the row under their header ("20:41", "1:02:03").
_START_NOW = re.compile(
    r"(?:시작|start(?:ed)?)\s*:?\s*(?P<h1>\d{1,2}):(?P<m1>\d\d)\b.{0,20}?(?:지금|now|현재)\s*:?\s*(?P<h2>\d{1,2}):(?P<m2>\d\d)\b",
    re.IGNORECASE,
)
_CLOCK = re.compile(r"^(?:(?P<h>\d+):)?(?P<m>\d{1,3}):\d{2}(?:\.\d+)?$")
_TOP_ROW = re.compile(
    r"^\s*\d+\s+\S+\s+(?:-?\d+|rt)\s+-?\d+\s+\S+\s+\S+\s+\S+\s+[RSDZTI]\s+[\d.]+\s+[\d.]+\s+"
    r"(?P<time>[\d:.]+)\s+(?:python\S*|olive)\b",
    re.IGNORECASE,
)
OPTIMIZER_BOUND_MIN = 15.0


def _minutes_shown(lines: list[str]) -> float:
    """The longest time the paste says the work has run, in minutes."""
    shown = [float(next(v for v in m.groups() if v)) for line in lines for m in _MINUTES_SAID.finditer(line)]
    shown += [
        60 * float(next(v for v in m.groups() if v)) for line in lines for m in _HOURS_SAID.finditer(line)
    ]
    # ... or the shell's `time` for a run that was stopped: "real 187m41.220s".
    shown += [
        int(real["m"] or 0) + float(real["s"]) / 60 for line in lines if (real := _REAL.match(line.strip()))
    ]
    for header, row in zip(lines, lines[1:], strict=False):
        if re.search(r"\bELAPSED\b|\bTIME\+", header) and re.search(r"python|olive", row, re.IGNORECASE):
            clocks = [c for token in row.split() if (c := _CLOCK.match(token))]
            shown += [int(c["h"] or 0) * 60 + int(c["m"]) for c in clocks[:1]]
    # ... or a start and a now, each with its time: "시작 14:02, 지금 14:21", "started 14:02, now 14:21".
    for line in lines:
        if span := _START_NOW.search(line):
            shown.append(
                (int(span["h2"]) * 60 + int(span["m2"]) - int(span["h1"]) * 60 - int(span["m1"])) % 1440
            )
    # ... or top's row alone, its header cut ("top -b -n1 -p 48211 | tail -1"): PID USER PR NI VIRT RES SHR S %CPU %MEM
    # TIME+ COMMAND, "48211 ubuntu  20  0  31.2g  27.0g  12m R  99.8 43.1  19:03.77 python".
    shown += [
        int(clock["h"] or 0) * 60 + int(clock["m"])
        for line in lines
        if (top := _TOP_ROW.match(line)) and (clock := _CLOCK.match(top["time"]))
    ]
    # ... or top's column written inline: "top: python olive run ...  99.8% CPU  TIME+ 19:04.77".
    for line in lines:
        inline = re.search(r"\bTIME\+\s+(\S+)", line)
        if inline and re.search(r"python|olive", line, re.I) and (clock := _CLOCK.match(inline.group(1))):
            shown.append(int(clock["h"] or 0) * 60 + int(clock["m"]))
    return max(shown, default=0.0)


def optimizer_unfinished(evidence: Evidence) -> bool | None:
    """Olive's last optimizer pass started and never finished, and the paste shows it running for
    OPTIMIZER_BOUND_MIN minutes or more (a pass that takes seconds on an encoder)."""
    lines = report_lines(evidence)
    started = [(i, m["name"] or "") for i, line in enumerate(lines) if (m := _PASS_STARTED.search(line))]
    # ... or started by a command the paste shows ("$ python -m onnxruntime.transformers.optimizer ...").
    started = started or [(0, "") for command in evidence.commands if _PASS_STARTED.search(command)][:1]
    if not started:
        return None
    index, name = started[-1]
    name = name or "onnxruntime.transformers.optimizer"
    if any((f := _PASS_FINISHED.search(line)) and f["name"] == name for line in lines[index:]):
        return None
    return True if max(_minutes_shown(lines), _minutes_since(lines, index)) >= OPTIMIZER_BOUND_MIN else None


# A clock time of the day, not a duration's ("TIME+ 19:03.77") nor a date's part.
_CLOCK_OF_DAY = re.compile(r"(?<![\d:.])(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?::[0-5]\d)?(?![\d.]|:\d)")


def _minutes_since(lines: list[str], index: int) -> float:
    """The minutes from the pass's start, as its log line dates it, to the latest time of day a line after it gives
    ("Running pass ...OrtTransformersOptimization" at 13:03:40, then "top at 13:22")."""
    began = _CLOCK_OF_DAY.search(lines[index])
    later = [m for line in lines[index + 1 :] for m in _CLOCK_OF_DAY.finditer(line)]
    if began is None or not later:
        return 0.0
    start = int(began["h"]) * 60 + int(began["m"])
    # A time before the start is another event's, not a later look.
    return max((max(0, int(m["h"]) * 60 + int(m["m"]) - start) for m in later), default=0.0)


def report_details(evidence: Evidence, values: dict[str, bool | str | None]) -> dict[str, dict[str, str]]:
    """The rows or the timeline behind each of these facts that holds."""
    details: dict[str, dict[str, str]] = {}
    lines = report_lines(evidence)
    if values.get("cold_tail") and (worst := worst_tail(lines)):
        run, (p99, base, ratio) = worst
        details["cold_tail"] = {
            "p99_ms": f"{p99:g}",
            "against_ms": f"{base:g}",
            "ratio": f"{ratio:.0f}x",
            "run": run.line[:160],
        }
    elif values.get("cold_tail") and (warmed := tail_gone_after_warmup(lines)):
        details["cold_tail"] = {"run": warmed[0][:160], "after_warmup": warmed[1][:160]}
    for name, pair_of in (("list_one_by_one", one_by_one), ("short_samples_hide", hidden_by_samples)):
        if values.get(name) and (pair := pair_of(report_rows(evidence))):
            details[name] = {"against": pair[0].text[:120], "shown": pair[1].text[:120]}
    if values.get("scaled_in_slowly") and (scale_in := slow_scale_in(lines)):
        details["scaled_in_slowly"] = {
            "minutes": f"{scale_in.minutes:.1f}",
            "from": scale_in.stop[:100],
            "to": scale_in.zero[:100],
        }
    return details


_READ_TIMEOUT = re.compile(r"ReadTimeoutError|Read timeout on endpoint URL", re.IGNORECASE)
# An answer after it: a call's status with its time ("ok 200 latency=142ms"), a response shown with its time
# ('{"embedding": [...]}  (412 ms)'), or the person's word that the calls after it worked ("두번째부턴 정상",
# "the second call returned fine").
_ANSWERED = re.compile(
    r"\b200\b[^\n]{0,40}?\b\d+(?:\.\d+)?\s*ms\b|[}\]]\s*\(?\d+(?:\.\d+)?\s*ms\b|^real\s+0m\d(?:\.\d+)?s\s*$"
    r"|\bonly the first (?:call|request|invocation|invoke)\b[^.\n]{0,30}?\b(?:fails?|failed|times? out|timed out)\b"
    r"|(?:(?:두|2)\s*번\s*째|다음|이후|재시도)(?:\s*(?:호출|요청|콜))?\S{0,4}\s*(?:은|는|부터)?\s*(?:다\s*)?(?:정상|성공|잘\s*(?:됨|돼|나옴|나와)|\d+\s*ms)"
    r"|첫\s*(?:번째\s*)?(?:호출|요청)\s*만\s*(?:타임아웃|실패|timeout)"
    r"|\b(?:second|next|later|subsequent|following) (?:calls?|requests?|invocations?|invokes?|tries|attempts?)\b"
    r"[^.\n]{0,20}?\b(?:worked|succeeded|returned|fine|ok|were fine|are fine|went through)\b"
    # ... or the same call run again answered: "re-running the same cell 30 s later returns in 180 ms".
    # ... or the SDK's response printed, with its status: "{'ResponseMetadata': {... 'HTTPStatusCode': 200 ...}".
    r"|['\"]HTTPStatusCode['\"]\s*:\s*200\b"
    r"|\b(?:re-?run(?:ning)?|re-?ran|retr(?:y|ying|ied)|re-?invok\w+|call(?:ing|ed)? (?:it )?again)\b[^.\n]{0,40}?"
    r"\b(?:works?|worked|succeeds?|succeeded|went through|(?:returns?|returned|answers?|answered)\s+"
    r"(?:fine|ok|normally|200|in\s+\d+(?:\.\d+)?\s*ms))\b",
    re.IGNORECASE,
)


def answered_after_timeout(evidence: Evidence) -> bool | None:
    """A call that outlasted the client's read timeout, and a call after it answered: the endpoint serves, so the
    first call met a cold start, not a worker that dies whenever it loads. None where no such answer follows."""
    items = [item for item in evidence.items if not item.whole]
    first = next((i for i, item in enumerate(items) if _READ_TIMEOUT.search(item.text)), None)
    if first is None:
        return None
    for item in items[first + 1 :]:
        for found in _ANSWERED.finditer(item.text):
            if not item.prose or reading_of(item, found).polarity == "affirmed":
                return True
    return None


def _timed_first_cold(lines: list[str]) -> bool:
    """The shell's `time` around the calls, one after another: the first's "real" took seconds and a later one's
    under a second ("real 0m41.228s", then "real 0m0.412s")."""
    took = [int(m["m"] or 0) * 60 + float(m["s"]) for line in lines if (m := _REAL.match(line.strip()))]
    return len(took) >= 2 and took[0] >= MIN_COLD_S and any(t * 1000 < MAX_WARM_MS for t in took[1:])


def cold_first_call(evidence: Evidence) -> bool | None:
    """A first call took seconds and the calls after it milliseconds (``latency``), as written and affirmed;
    None where no such figures are given, or where the endpoint is serverless: there the first call's seconds
    are the cold start every serverless endpoint has (F15 only where it outlasts the client's timeout)."""
    if serverless(evidence):
        return None
    items = [item for item in evidence.items if not item.whole]

    def affirmed(find: Callable[[str], list[re.Match[str]]], among: list[EvidenceItem]) -> int | None:
        return next(
            (
                i
                for i, item in enumerate(among)
                for m in find(item.text)
                if reading_of(item, m).polarity == "affirmed"
            ),
            None,
        )

    if (
        affirmed(cold_first_calls, items) is not None
        or first_invocation_cold([i.text for i in items if not i.prose])
        or numbered_first_cold([i.text for i in items])
        or first_call_column_cold([i.text for i in items])
        or call_column_first_cold([i.text for i in items])
        or _timed_first_cold([i.text for i in items])
    ):
        return True
    first = affirmed(first_call_seconds, items)
    later = None if first is None else affirmed(later_calls_millis, items[first + 1 :])
    return True if later is not None else None
