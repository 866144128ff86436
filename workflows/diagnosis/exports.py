"""Log exports as CSV: Datadog's Log Explorer, CloudWatch Logs Insights, Grafana's and Loki's tables.

A header row names the columns, one of which holds the event's text (``message``, ``@message``,
``content``, ``body``, ``line``, ``log``, ``msg``). Every row after it is one event, up to the first
line that does not parse into as many fields, or has no time where the header has a time column.
Python's ``csv`` reads the quoting (a message with commas is quoted, its quotes doubled). A row
software wrote is a log line; a row a person added to the export ("note: grep ... over 24h -> 0
hits") is prose, read for what it denies or asks.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

LOG_EXPORT = "log-export-csv"

_MESSAGE_COLUMNS = ("message", "@message", "content", "body", "line", "log", "msg")
_TIME_COLUMNS = ("@timestamp", "timestamp", "date", "time", "_time", "ts")
_HEADER_CELL = re.compile(r"^@?[A-Za-z][\w .@-]{0,39}$")
_TIME_VALUE = re.compile(r"^\s*\d")


@dataclass(frozen=True)
class ExportRow:
    """One event of an export: its line number (from 1) and its text."""

    number: int
    message: str


@dataclass(frozen=True)
class Export:
    """A CSV export found in a paste: the lines it spans (header included) and its events."""

    lines: range
    rows: tuple[ExportRow, ...]


def _fields(line: str) -> list[str]:
    return next(csv.reader([line]), [])


def _message_column(header: list[str]) -> int | None:
    names = [cell.strip().lower() for cell in header]
    if len(names) < 2 or not all(_HEADER_CELL.match(cell.strip()) for cell in header):
        return None
    return next((names.index(name) for name in _MESSAGE_COLUMNS if name in names), None)


def csv_exports(lines: list[str | None]) -> list[Export]:
    """Every CSV log export in ``lines`` (None marks a line another reader took)."""
    found: list[Export] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        header = _fields(line) if line and "," in line else []
        column = _message_column(header)
        if column is None:
            index += 1
            continue
        names = [cell.strip().lower() for cell in header]
        time = next((names.index(name) for name in _TIME_COLUMNS if name in names), None)
        rows: list[ExportRow] = []
        last = index + 1
        while last < len(lines) and (row := lines[last]) and len(fields := _fields(row)) == len(header):
            if time is not None and not _TIME_VALUE.match(fields[time]):
                break  # an event has its time: a line with as many commas but no time is not one
            rows.append(ExportRow(last + 1, fields[column].strip()))
            last += 1
        if rows:
            found.append(Export(range(index, last), tuple(rows)))
        index = max(last, index + 1)
    return found
