"""Workers that finished loading after a benchmark began: the run measured workers still loading (F33).

A real-time endpoint's model server loads its workers one after another; a load test started right at InService
waits for them, and its p99 shows it. The paste says so by the times: the benchmark's start ("벤치 시작 09:00:05") and
a worker's "Model loaded" after it, or, in a log export that dropped the lines' times, by their order.
"""

from __future__ import annotations

import re

from workflows.diagnosis.scale_in import clock_seconds

# The benchmark's start, with its time: "벤치 시작 09:00:05", "bench started at 09:00:05", "load test start 14:02".
# ... or the measurement's, its time after a few words: "측정 시작: 엔드포인트 InService 직후 (10:00:05)".
_BENCH_START = re.compile(
    r"(?:벤치(?:마크)?|부하\s*테스트|측정|bench(?:mark)?|load test|measurement)\s*(?:run\s*)?"
    r"(?:시작|start(?:ed)?|kicked off|began|begun)\s*(?:automatically\s*)?"
    r"(?:at\s*|:\s*)?(?:[^\d\n]{0,30}?\()?(?P<h>\d{1,2}):(?P<m>\d\d)(?::(?P<s>\d\d))?",
    re.IGNORECASE,
)
# ... or said without its time, in a log export whose lines keep their order: "Starting load test (...)".
_BENCH_START_SAID = re.compile(
    r"(?:starting (?:the )?(?:load test|bench(?:mark)?)|(?:load test|bench(?:mark)?|부하\s*테스트|벤치)\s*"
    r"(?:started|starts|시작))\b",
    re.IGNORECASE,
)
# A model server's worker that finished loading, with its time: "09:00:16 W-9002-model MODEL_LOG - Model loaded".
_WORKER_LOADED = re.compile(
    r"^\s*(?:\d{4}-\d\d-\d\d[T ])?(?P<h>\d{1,2}):(?P<m>\d\d):(?P<s>\d\d)\b.{0,80}?\bW-\d+\S*.{0,80}?"
    r"\b[Mm]odel (?:[\w.-]+ )?loaded\b",
)
# ... or told with its time after it: 'W-9001~W-9003 "Model loaded" 가 10:00:41 까지 찍힘'.
_WORKER_LOADED_BY = re.compile(
    r"\bW-\d+\S*.{0,40}?\b[Mm]odel (?:[\w.-]+ )?loaded\b\W{0,3}[^\d\n]{0,12}?"
    r"(?P<h>\d{1,2}):(?P<m>\d\d):(?P<s>\d\d)\b"
)
_WORKER_LOADED_SAID = re.compile(r"\bW-\d+\S*.{0,80}?\b[Mm]odel (?:[\w.-]+ )?loaded\b")


def workers_loading_in_run(lines: list[str]) -> str:
    """A worker's "Model loaded" timed after the benchmark's start: the run measured workers still loading. That
    line, or empty."""
    starts = [clock_seconds(m) for line in lines if (m := _BENCH_START.search(line))]
    if starts and (
        timed := next(
            (
                line
                for line in lines
                if (m := _WORKER_LOADED.search(line) or _WORKER_LOADED_BY.search(line))
                and clock_seconds(m) > min(starts)
            ),
            "",
        )
    ):
        return timed
    # A log export that dropped the lines' times keeps their order: a worker loaded after the line that started the
    # run ('"Starting load test ..."', then '"W-9001-model Model loaded"').
    begun = next((i for i, line in enumerate(lines) if _BENCH_START_SAID.search(line)), None)
    if begun is None:
        return ""
    untimed = (line for line in lines[begun + 1 :] if not _WORKER_LOADED.search(line))
    return next((line for line in untimed if _WORKER_LOADED_SAID.search(line)), "")
