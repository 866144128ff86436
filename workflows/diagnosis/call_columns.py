"""A latency table that numbers each call in a column of its own, after the cells that say what ran:

    seq  batch  call#  latency
    256  1      1      47,712 ms
    256  1      2      16 ms

Within the rows that share those cells (one shape), call 1 took seconds and call 2 milliseconds: the first call of
that shape paid for something the calls after it did not (an engine built, a model loaded). ``latency`` reads the
tables that lead each row with its number, or give the first call and the calls after it columns of their own.
"""

from __future__ import annotations

import re

from workflows.diagnosis.latency import _CELL_TIME, MAX_WARM_MS, MIN_COLD_S, _ms
from workflows.diagnosis.tables import pipe_cells

# The call-number column's header, a word with its number mark: "call#", "call #", "req_no", "attempt_idx".
_CALL_COLUMN = re.compile(
    r"(?:call|req(?:uest)?|invocation|invoke|attempt|try)[ _]?(?:#|no\.?|num(?:ber)?|idx|index)",
    re.IGNORECASE,
)
# A header is a row of column names ("p50" among them): no figures, no sentence.
_NOT_HEADER = re.compile(r"(?<![\w.])\d|[.,;:!?]\s")
# A call's number, or the first of a range of calls on one row ("2..50", "2-50"): the second call is among them.
_NUMBER = re.compile(r"(?P<n>[12])(?:\s*(?:\.\.|-|–|~|to)\s*\d+)?")


def _cells(line: str) -> list[str]:
    """A row's cells: between pipes where it has them, else its words."""
    cells = pipe_cells(line) if line.count("|") >= 2 else line.split()
    return [cell for cell in cells if cell]


def call_column_first_cold(lines: list[str]) -> str:
    """Call 1's row where it took seconds and call 2 of the same shape milliseconds, under a header that names a
    call-number column; or empty."""
    column: int | None = None
    first: dict[tuple[str, ...], tuple[str, float]] = {}
    for line in lines:
        cells = _cells(line)
        at = next((i for i, cell in enumerate(cells) if _CALL_COLUMN.fullmatch(cell)), None)
        if at is not None and len(cells) <= 10 and not _NOT_HEADER.search(line):
            column, first = at, {}
            continue
        if column is None or len(cells) <= column + 1 or not (number := _NUMBER.fullmatch(cells[column])):
            continue
        timed = next((m for m in _CELL_TIME.finditer(" ".join(cells[column + 1 :])) if m["unit"]), None)
        if timed is None:
            continue
        shape, ms = tuple(cells[:column]), _ms(timed["value"], timed["unit"])
        if number["n"] == "1":
            first[shape] = (line, ms)
        elif shape in first and first[shape][1] >= MIN_COLD_S * 1000 and ms < MAX_WARM_MS:
            return first[shape][0]
    return ""
