"""A latency report's tail: a p99 far above the rest of its run measured something besides the model.

A benchmark's figures show F16 and F33 where no error does. A serverless endpoint measured after too few
warmup calls has a p99 of tens of seconds over a p90 of a few hundred milliseconds (the field notes: warmup
5 gave p99 31,478 ms, warmup 15 gave 253 ms): its slowest samples are cold starts. A real-time endpoint
whose workers were still loading has the same shape in seconds (p99 1,611 ms over p90 14 ms). A run whose
p99 is at least TAIL_RATIO times its p90 (its p50 where it gives no p90) and at least MIN_TAIL_MS is such
a tail; what the endpoint is (serverless or not) says which entry (``diagnosis_rules.yaml``).

Runs are read where reports write them: a line with two or more percentiles ("p50 11.8 ms / p90 14.0 ms /
p99 1,611 ms", "latency (ms) p50 121.7 p90 188.3 p99 29870.4") and a table whose header names percentile
columns ("| run | p50 (ms) | p90 (ms) | p99 (ms) |") and its rows, or a CSV export's ("run,warmup,p50_ms,p99_ms"). A value's unit is its own (ms, s, 초), else
the column's or the line's ("(ms)", "(s)"), else milliseconds.

A first call that takes seconds where the calls after it take milliseconds ("first request 38.4 s, then
28-31 ms", "첫 요청만 38.4s 걸리고 그 뒤로는 28~31ms") is work done once, at the first call: an engine that
loads the model then (LMI, F18) or builds for the shape then (TensorRT, F21). Which one, the engine says. A
thread may say it in two lines: the first call's seconds in one, the later calls' milliseconds in a later one;
a server's request log says it by the time each /invocations took.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from workflows.diagnosis.tables import pipe_cells

TAIL_RATIO = 10.0
MIN_TAIL_MS = 1000.0
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_PERCENTILE = re.compile(
    rf"(?<![\w.])p(?P<q>50|90|95|99)(?:\s*\((?P<declared>ms|s)\))?\s*[:=]?\s*(?P<value>{_NUMBER})"
    r"\s*(?P<unit>ms|sec|s|초)?(?!\w|\.\w)",  # a full stop may end the sentence: "... p99 20.4ms."
    re.IGNORECASE,
)
# A value labelled after it, as an alert's query results are: "B0=1611.4 (p99 ms), B1=21.0 (p50 ms)".
_LABELLED_VALUE = re.compile(
    rf"(?<![\w.])(?P<value>{_NUMBER})\s*\(\s*p(?P<q>50|90|95|99)(?:\s*(?P<unit>ms|s)|(?P<declared>))\s*\)",
    re.IGNORECASE,
)
_FIGURE_WORD = re.compile(r"(?<![pP\w])\d")  # a figure, not a percentile's name
_HEADER_CELL = re.compile(r"^p(?P<q>50|90|95|99)\b(?:\s*\((?P<unit>ms|s)\))?", re.IGNORECASE)
_CSV_HEADER_CELL = re.compile(r"(?:\w+[_.])?p(?P<q>50|90|95|99)(?:[_ ]?\(?(?P<unit>ms|s)\)?)?", re.IGNORECASE)
_CELL_VALUE = re.compile(rf"(?P<value>{_NUMBER})\s*(?P<unit>ms|s|초)?", re.IGNORECASE)
_LINE_UNIT = re.compile(r"\((?P<unit>ms|s)\)|\b(?P<bare>ms)\b", re.IGNORECASE)
_SECONDS = r"(?P<cold>\d+(?:\.\d+)?)\s*(?:s|sec|secs|seconds|초)(?![a-z])"
_MILLIS = r"(?P<warm>\d+(?:\.\d+)?)\s*(?:[~–-]\s*\d+(?:\.\d+)?\s*)?ms\b"
# ... the words between may hold an aside in parentheses: "first call to the LMI endpoint (djl-inference lmi, ...) took 41s".
# ... or a row labelled so: "b=1 first: 47.7 s   이후 15-17 ms".
_FIRST_EN = (
    r"(?:\bfirst\s+(?:[\w=-]+\s+){0,3}?[`'\"/]?(?:call|request|invocation|invoke\w*|inference|predict\w*|curl)s?\b"
    r"|\bfirst\s*:)"
    r"(?:[^(\n]{0,40}?\([^)\n]{0,100}\))?.{0,60}?"
)
# ... "every request after is 18-25 ms", "Next 500 calls p50 28 ms": the calls after it.
_LATER_EN = (
    r"\b(?:then|after(?: that|wards)?|subsequent|later|the rest|others?|following|second|next)\b.{0,40}?"
)
# ... or the run's count: "1회차 46.9 s, 2회차 16.2 ms".
_FIRST_KO = r"(?:첫\s*(?:번째\s*)?(?:요청|호출|추론|콜|call|request|invoke|invocation)\w*|(?<!\d)1\s*(?:회차|번째))\s*.{0,40}?"
_LATER_KO = r"(?:이후|그\s*뒤|그\s*다음|두\s*번째|나머지|다음|부터|(?<!\d)2\s*(?:회차|번째)).{0,40}?"
# ... the two languages mixed in one line ("b=1 first: 47.7 s   이후 15-17 ms").
_FIRST_CALL = (
    re.compile(_FIRST_EN + _SECONDS + r".{0,80}?" + f"(?:{_LATER_EN}|{_LATER_KO})" + _MILLIS, re.IGNORECASE),
    re.compile(_FIRST_KO + _SECONDS + r".{0,60}?" + f"(?:{_LATER_KO}|{_LATER_EN})" + _MILLIS, re.IGNORECASE),
)
# The same said in two lines of a thread: "첫 요청이 41초 걸림" ... "아 그 뒤로는 전부 28~33ms 맞아요".
_FIRST_ONLY = (
    re.compile(f"(?:{_FIRST_EN}|{_FIRST_KO}){_SECONDS}", re.IGNORECASE),
    re.compile(
        _SECONDS + r".{0,30}?\b(?:on|for|at) (?:the|its) first (?:call|request|invocation)\b", re.IGNORECASE
    ),
)
_LATER_ONLY = re.compile(f"(?:{_LATER_EN}|{_LATER_KO}){_MILLIS}", re.IGNORECASE)
_SAYS_FIRST = re.compile(
    r"first|첫|1\s*(?:회차|번째)", re.IGNORECASE
)  # what every first-call reading needs, found cheaply
# A request log's line for one invocation and the milliseconds it took.
_INVOCATION_MS = re.compile(r"/invocations\b.{0,40}?\b(?P<ms>\d+(?:\.\d+)?)\s*ms\b")
# Seconds against milliseconds: a first call this slow, and calls after it this fast.
# ... or a table of numbered requests ("| 1 | 1 | 38,412 ms |", "| 1st, batch 1 | 47.7 s |", "1     38,412" under
# "req#  latency_ms"): request 1's and request 2's time, thousands separated or not, with its unit or the header's.
_ORDINAL = re.compile(
    # ... after the word for a call where the line leads with it: "call 1: 41.8 s", "req #2  31 ms", "호출 1: 40초".
    r"^\s*\|?\s*(?:(?:call|req(?:uest)?|invocation|호출|요청)\s*)?#?\s*"
    r"(?:(?P<n>[12])(?:st|nd)?(?!\w|\.\d)|(?P<word>first|second)\b)",
    re.IGNORECASE,
)
_CELL_TIME = re.compile(
    r"(?<![\w.,])(?P<value>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(?P<unit>ms|s|sec|초)?(?![\w.,-])"
)
_MS_HEADER = re.compile(
    r"\b(?:req(?:uest)?s?\s*#|#|req#|request|req)\b.*(?:\bms\b|_ms\b|\(ms\))|(?:\bms\b|_ms\b|\(ms\)).*\b(?:req|request)",
    re.IGNORECASE,
)
MIN_COLD_S = 5.0
MAX_WARM_MS = 1000.0


@dataclass(frozen=True)
class Run:
    """One run's percentiles, in milliseconds, and the line they were read from."""

    percentiles: dict[int, float]
    line: str

    @property
    def tail(self) -> tuple[float, float, float] | None:
        """(p99, the percentile it is compared with, their ratio) where the p99 is a tail, else None."""
        p99 = self.percentiles.get(99)
        base = self.percentiles.get(90) or self.percentiles.get(50)
        if p99 is None or not base or p99 < MIN_TAIL_MS or p99 / base < TAIL_RATIO:
            return None
        return p99, base, p99 / base


def _ms(value: str, unit: str | None) -> float:
    number = float(value.replace(",", ""))
    return number * 1000 if unit and unit.lower() in ("s", "sec", "초") else number


def _columns(
    cells: list[str], match: Callable[[str], re.Match[str] | None]
) -> dict[int, tuple[int, str | None]]:
    """A header row's percentile columns: column -> (percentile, unit)."""
    return {i: (int(m.group("q")), m.group("unit")) for i, cell in enumerate(cells) if (m := match(cell))}


def _values(cells: list[str], header: dict[int, tuple[int, str | None]]) -> dict[int, float]:
    """A row's percentiles in milliseconds, by the header's columns (a cell's own unit first: "1,611ms")."""
    return {
        q: _ms(m.group("value"), m.group("unit") or unit)
        for i, (q, unit) in header.items()
        if i < len(cells) and (m := _CELL_VALUE.fullmatch(cells[i]))
    }


# A row of a table that lists one figure a line ("max       1,611 ms", "에러      0"): it keeps such a table open.
_FIGURE_ROW = re.compile(r"^\s*[\w가-힣%.-]{1,20}(?:\s[\w가-힣%.-]{1,20})?\s+[\d,.]+\s*[\w%]{0,4}\s*$")


def _line_unit(line: str) -> str | None:
    """The unit a line declares for its figures: "(ms)", "(s)" or a bare "ms"."""
    declared = _LINE_UNIT.search(line)
    return (declared.group("unit") or declared.group("bare")) if declared else None


def runs(lines: list[str]) -> list[Run]:
    """Every run the lines give percentiles for, in order: several on a line, a table's row under its header, or
    a table that lists one percentile a line ("p50  20.1 ms" then "p99  1,587 ms")."""
    found: list[Run] = []
    header: dict[int, tuple[int, str | None]] = {}  # column -> (percentile, unit)
    csv_header: dict[int, tuple[int, str | None]] = {}
    listed: dict[int, float] = {}  # a table of one percentile a line, as far as it goes
    listed_lines: list[str] = []
    spaced: dict[int, tuple[int, str | None]] = {}  # a space-aligned table's percentile columns
    width = 0
    for line in map(_metric_row, lines):
        matches = list(_PERCENTILE.finditer(line))
        if len(matches) == 1 and matches[0].start() == len(line) - len(line.lstrip()):
            m = matches[0]
            listed[int(m.group("q"))] = _ms(
                m.group("value"), m.group("unit") or m.group("declared") or _line_unit(line)
            )
            listed_lines.append(line.strip())
            continue
        if listed and _FIGURE_ROW.match(line):
            continue
        if len(listed) >= 2:
            found.append(Run(dict(listed), " / ".join(listed_lines)))
        listed, listed_lines = {}, []
        if line.count(",") >= 2 and "|" not in line:  # a CSV export: "run,warmup,p50_ms,p99_ms"
            cells = [cell.strip().strip('"') for cell in line.split(",")]
            if len(heads := _columns(cells, _CSV_HEADER_CELL.fullmatch)) >= 2:
                csv_header = heads
                continue
            if len(values := _values(cells, csv_header)) >= 2:
                found.append(Run(values, line.strip()))
                continue
        if line.count("|") >= 2:
            cells = pipe_cells(line)
            # A header names its percentiles and holds no figure ("| p50 (ms) | p99 (ms) |").
            if (heads := _columns(cells, _HEADER_CELL.match)) and not _FIGURE_WORD.search(line):
                header = heads
                continue
            if len(values := _values(cells, header)) >= 2:
                found.append(Run(values, line.strip()))
            elif not header:  # cells that name their percentiles: "p50  41 ms | p90  77 ms | p99 31,478 ms"
                found += _line_runs(line, matches)
            continue
        header = {}
        # A table aligned by spaces: its header names two percentiles and no figure ("run warmup requests p50 p99",
        # "p50_ms p99_ms"),
        # each row below it as many words ("r1  3  1000  17.9ms  1611ms").
        words = line.split()
        if len(heads := _columns(words, _CSV_HEADER_CELL.fullmatch)) >= 2 and not _FIGURE_WORD.search(line):
            spaced, width = heads, len(words)
            continue
        if spaced and len(words) == width and len(values := _values(words, spaced)) >= 2:
            found.append(Run(values, line.strip()))
            continue
        spaced = {}
        found += _line_runs(line, matches)
    if len(listed) >= 2:
        found.append(Run(dict(listed), " / ".join(listed_lines)))
    return found


def _metric_row(line: str) -> str:
    """A metric table's row that names its percentile in a cell of its own ("| p99 | 29,904 ms |"), as a line."""
    if (
        line.count("|") >= 2
        and len(cells := pipe_cells(line)) == 2
        and re.fullmatch(r"p(?:50|90|95|99)", cells[0], re.I)
    ):
        return f"{cells[0]} {cells[1]}"
    return line


def _line_runs(line: str, matches: list[re.Match[str]]) -> list[Run]:
    """A line's runs: two percentiles or more, named before their values or labelled after them. A percentile named
    again starts the next run ("p50 19.8ms / p99 1611ms. 워밍업 20회로 다시 돌리니 p99 20.4ms." is two)."""
    labelled = list(_LABELLED_VALUE.finditer(line))
    if len(matches) < 2 and len(labelled) < 2:
        return []
    line_unit = _line_unit(line)
    groups: list[dict[int, float]] = [{}]
    for m in matches if len(matches) >= 2 else labelled:
        q = int(m.group("q"))
        if q in groups[-1]:
            groups.append({})
        groups[-1][q] = _ms(m.group("value"), m.group("unit") or m.group("declared") or line_unit)
    return [Run(percentiles, line.strip()) for percentiles in groups if percentiles]


def worst_tail(lines: list[str]) -> tuple[Run, tuple[float, float, float]] | None:
    """The run whose p99 stands furthest above the rest, where any run's does."""
    tails = [(run, tail) for run in runs(lines) if (tail := run.tail)]
    return max(tails, key=lambda pair: pair[1][2]) if tails else None


# A run after a longer warm-up: "warmup 20 으로 다시 돌리니", "re-ran with 200 warm-up calls", "after warming".
_WARMED = re.compile(r"warm[\s-]?up|warming|워밍업|웜업|예열", re.IGNORECASE)


def tail_gone_after_warmup(lines: list[str]) -> tuple[str, str] | None:
    """A p99 past a second and, on a later line that warmed up longer, a p99 a tenth of it or less: the first
    measured workers that were still loading. The two lines, or None."""
    p99s = [
        (line, m.end(), _ms(m["value"], m["unit"] or m["declared"] or _line_unit(line)))
        for line in lines
        for m in _PERCENTILE.finditer(line)
        if m["q"] == "99"
    ]
    for index, (line, at, cold) in enumerate(p99s):
        if cold < MIN_TAIL_MS:
            continue
        for later, later_at, warm in p99s[index + 1 :]:
            # ... later on the same line too, where the words between say the warm-up ("... 워밍업 20회로 다시 돌리니 p99").
            warmed = _WARMED.search(later) if later != line else _WARMED.search(line, at, later_at)
            if warmed and warm * TAIL_RATIO <= cold:
                return line, later
    return None


def first_call_seconds(line: str) -> list[re.Match[str]]:
    """Where the line says a first call took seconds, the calls after it left to another line."""
    if not _SAYS_FIRST.search(line):
        return []
    return [m for p in _FIRST_ONLY for m in p.finditer(line) if float(m.group("cold")) >= MIN_COLD_S]


def later_calls_millis(line: str) -> list[re.Match[str]]:
    """Where the line says the calls after the first took milliseconds."""
    return [m for m in _LATER_ONLY.finditer(line) if float(m.group("warm")) < MAX_WARM_MS]


def first_invocation_cold(lines: list[str]) -> str:
    """A server's request log where the first /invocations took seconds and one after it milliseconds (DJL's
    RequestLogger: '"POST /invocations HTTP/1.1" 200 41203ms', then '... 200 28ms'): that line, or empty."""
    took = [(line, float(m.group("ms"))) for line in lines if (m := _INVOCATION_MS.search(line))]
    if len(took) >= 2 and took[0][1] >= MIN_COLD_S * 1000 and any(ms < MAX_WARM_MS for _, ms in took[1:]):
        return took[0][0]
    return ""


# A table's first-call column and the column of the calls after it: "| batch | 첫 호출 | 이후 p50 |".
_FIRST_COLUMN = re.compile(
    r"^(?:첫\s*(?:번째\s*)?(?:호출|요청)|first(?: call| request)?|1st(?: call)?|cold)\b", re.I
)
_LATER_COLUMN = re.compile(r"^(?:이후|after|later|warm|steady|then)\b", re.IGNORECASE)


def first_call_column_cold(lines: list[str]) -> str:
    """A piped table whose first-call column holds seconds where the column after it holds milliseconds, in the
    same row ("| 1 | 47.7 s | 16 ms |"): that row, or empty."""
    columns: tuple[int, int] | None = None
    spaced = (
        False  # under a header aligned by spaces that names both columns ("seq_len  first call  steady p50")
    )
    for line in lines:
        if line.count("|") < 2:
            header = _spaced_header(line)
            row = _spaced_row_cold(line) if spaced and not header else None
            if row:
                return line
            spaced = header or (spaced and row is not None)
            columns = None
            continue
        cells = pipe_cells(line)
        first = next((i for i, cell in enumerate(cells) if _FIRST_COLUMN.match(cell)), None)
        later = next((i for i, cell in enumerate(cells) if _LATER_COLUMN.match(cell)), None)
        if first is not None and later is not None:
            columns = (first, later)
            continue
        if columns and len(cells) > max(columns):
            cold = _CELL_TIME.search(cells[columns[0]])
            warm = _CELL_TIME.search(cells[columns[1]])
            if (
                cold
                and warm
                and cold["unit"]
                and warm["unit"]
                and _ms(cold["value"], cold["unit"]) >= MIN_COLD_S * 1000
                and _ms(warm["value"], warm["unit"]) < MAX_WARM_MS
            ):
                return line
    return ""


def _spaced_header(line: str) -> bool:
    """A header without pipes that names the first-call column, then the column of the calls after it."""
    words = line.split()
    first = next((i for i in range(len(words)) if _FIRST_COLUMN.match(" ".join(words[i:]))), None)
    return first is not None and any(_LATER_COLUMN.match(word) for word in words[first + 1 :])


def _spaced_row_cold(line: str) -> bool | None:
    """A row under such a header: None where it holds no two timed cells, else whether its first timed cell is
    seconds and its next milliseconds ("128 41.0 s 7 ms")."""
    timed = [m for m in _CELL_TIME.finditer(line) if m["unit"]]
    if len(timed) < 2:
        return None
    cold, warm = timed[0], timed[1]
    return (
        _ms(cold["value"], cold["unit"]) >= MIN_COLD_S * 1000
        and _ms(warm["value"], warm["unit"]) < MAX_WARM_MS
    )


def numbered_first_cold(lines: list[str]) -> str:
    """Request 1 of a numbered table in seconds and request 2 in milliseconds: request 1's row, or empty."""
    unit = False  # under a header that gives the cells' unit
    numbered: dict[int, tuple[str, float]] = {}
    for line in lines:
        if _MS_HEADER.search(line) and not re.search(r"\d", line):
            unit, numbered = True, {}
            continue
        if not (ordinal := _ORDINAL.match(line)):
            continue
        n = int(ordinal["n"]) if ordinal["n"] else 1 if ordinal["word"].lower() == "first" else 2
        rest = line[ordinal.end() :]
        found = next((m for m in _CELL_TIME.finditer(rest) if m["unit"] or unit), None)
        if found and n not in numbered:
            numbered[n] = (line, _ms(found["value"].replace(",", ""), found["unit"] or "ms"))
    first, second = numbered.get(1), numbered.get(2)
    if first and second and first[1] >= MIN_COLD_S * 1000 and second[1] < MAX_WARM_MS:
        return first[0]
    return ""


def cold_first_calls(line: str) -> list[re.Match[str]]:
    """Where the line says a first call took seconds and the calls after it milliseconds."""
    if not _SAYS_FIRST.search(line):
        return []
    return [
        m
        for pattern in _FIRST_CALL
        for m in pattern.finditer(line)
        if float(m.group("cold")) >= MIN_COLD_S and float(m.group("warm")) < MAX_WARM_MS
    ]
