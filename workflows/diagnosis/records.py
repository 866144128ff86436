"""Describe* records pasted in the layouts other than JSON: YAML, the AWS CLI's table, a console page.

``aws sagemaker describe-endpoint --output yaml`` and ``--output table`` print the same record as the
JSON output; a screenshot of the console read through OCR prints it as labels and values with the
letters OCR got wrong ("Creation tlme", "Last updatcd", "Statu s"). Each layout is parsed into the API's
own record (the keys of DescribeEndpoint / DescribeInferenceComponent), so the facts and rules read a
YAML record, a table and a console page exactly as they read the JSON:

- YAML: a block of top-level CamelCase keys, parsed with ``yaml.safe_load``;
- the CLI's table (awscli's ``TableFormatter``): a title row per section, nested sections one pipe
  deeper, rows either ``key | value`` or a header row over value rows;
- a console page: field labels matched to the API's keys with ``rapidfuzz`` (tolerant of OCR's
  letters), statuses to the API's vocabulary, and the console's dates read in its formats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import yaml
from rapidfuzz import fuzz, process

from workflows.diagnosis.documents import CLI_TABLE, CONSOLE_OCR, YAML_RECORD, Span

# The keys that make a record one of the Describe* outputs the documents reader knows.
_RECORD_KEYS = frozenset(
    {"EndpointStatus", "InferenceComponentStatus", "ProductionVariants", "RuntimeConfig", "Containers"}
)
_YAML_KEY = re.compile(r"^[A-Z][A-Za-z0-9]+:(?:\s|$)")
_YAML_MORE = re.compile(r"^(?:\s+\S|- |[A-Z][A-Za-z0-9]+:(?:\s|$))")
_TABLE_LINE = re.compile(r"^\s*[|+-][-+|]*")
_TABLE_RULE = re.compile(r"^\s*\|*[+-][-+|]*\s*$")

# Console labels and the API key each shows (SageMaker console, endpoint and inference component pages).
_CONSOLE_FIELDS = {
    "status": "EndpointStatus",
    "endpoint status": "EndpointStatus",
    "creation time": "CreationTime",
    "last updated": "LastModifiedTime",
    "failure reason": "FailureReason",
    "name": "EndpointName",
    "endpoint name": "EndpointName",
    "inference component name": "InferenceComponentName",
    "current copy count": "CurrentCopyCount",
    "desired copy count": "DesiredCopyCount",
}
_STATUSES = ("InService", "Creating", "Updating", "Failed", "OutOfService", "Deleting", "RollingBack")
# 80: "Statu s" scores 92 against "status", "Creation tlme" 92, "Last updatcd" 92; a prose word rarely
# reaches it against a two-word label, and a page needs a status and two other fields besides.
_LABEL_SCORE = 80
_CONSOLE_MIN_FIELDS = 3
_EMPTY_VALUE = re.compile(r"^\s*(?:-|—|–|N/?A|None)?\s*$", re.IGNORECASE)
_CONSOLE_DATES = (
    "%b %d, %Y %H:%M:%S %Z",
    "%b %d, %Y %H:%M %Z",
    "%b %d, %Y, %I:%M:%S %p %Z",
    "%b %d, %Y, %I:%M %p %Z",
    "%m/%d/%Y, %I:%M:%S %p",
    "%m/%d/%Y %H:%M:%S",
    "%a %b %d %Y %H:%M:%S",
    "%Y-%m-%d %H:%M:%S",
)


@dataclass(frozen=True)
class Record:
    """A record found in one layout: its form, its value and where it is (the lines it was read from)."""

    form: str
    span: Span
    lines: tuple[int, ...]


def _scalar(text: str) -> Any:
    return int(text) if re.fullmatch(r"-?\d+", text) else text


def _is_record(value: Any) -> bool:
    return isinstance(value, dict) and not _RECORD_KEYS.isdisjoint(value)


# --- YAML -------------------------------------------------------------------------------------------
def yaml_records(lines: list[str | None]) -> list[Record]:
    """YAML blocks of top-level CamelCase keys that parse into a Describe* record."""
    spans = []
    index = 0
    while index < len(lines):
        if not _YAML_KEY.match(lines[index] or ""):
            index += 1
            continue
        end = index + 1
        while end < len(lines) and _YAML_MORE.match(lines[end] or ""):
            end += 1
        try:
            value = yaml.safe_load("\n".join(line or "" for line in lines[index:end]))
        except yaml.YAMLError:
            value = None
        if _is_record(value):
            spans.append(Record(YAML_RECORD, Span(index, end - 1, value), tuple(range(index, end))))
        index = end
    return spans


# --- the AWS CLI's table layout ----------------------------------------------------------------------
def _depth(line: str) -> int:
    stripped = line.strip()
    return len(stripped) - len(stripped.lstrip("|"))


def _cells(line: str, depth: int) -> list[str]:
    inner = line.strip()[depth:-depth] if depth else line.strip()
    return [cell.strip() for cell in inner.split("|")]


def _section(rows: list[list[list[str]]]) -> dict[str, Any]:
    """A section's scalars: ``key | value`` rows, or a header row over value rows (groups between rules)."""
    groups = [group for group in rows if group]
    if len(groups) >= 2 and len(groups[0]) == 1 and len(groups[0][0]) > 1:
        header = groups[0][0]
        values = [row for group in groups[1:] for row in group if len(row) == len(header)]
        return {key: _scalar(value) for key, value in zip(header, values[0], strict=True)} if values else {}
    return {row[0]: _scalar(row[1]) for group in groups for row in group if len(row) == 2 and row[0]}


def _table(lines: list[str]) -> dict[str, Any] | None:
    """One CLI table: its sections nested by depth, repeated sections as lists."""
    root: dict[str, Any] = {}
    # The open section at each depth: (its dict, its rows in groups between rules).
    stack: list[tuple[dict[str, Any], list[list[list[str]]]]] = []

    def close(to: int) -> None:
        while len(stack) > to:
            record, rows = stack.pop()
            record.update({k: v for k, v in _section(rows).items() if k not in record})

    for line in lines:
        if _TABLE_RULE.match(line):
            if stack:
                stack[-1][1].append([])
            continue
        depth = _depth(line)
        cells = _cells(line, depth)
        if depth == 0 or not any(cells):
            continue
        if len(cells) == 1:  # a title: a section one level under the open one at depth - 1
            close(depth - 1)
            parent = stack[-1][0] if stack else root
            record: dict[str, Any] = {}
            existing = parent.get(cells[0])
            if existing is None:
                parent[cells[0]] = record
            elif isinstance(existing, list):
                existing.append(record)
            else:
                parent[cells[0]] = [existing, record]
            stack.append((record, [[]]))
        elif stack:
            close(depth)
            stack[-1][1][-1].append(cells)
    close(0)
    if len(root) == 1:
        only = next(iter(root.values()))
        return only if isinstance(only, dict) else None
    return root or None


def table_records(lines: list[str | None]) -> list[Record]:
    """Runs of the CLI's table lines that parse into a Describe* record."""
    spans = []
    index = 0
    while index < len(lines):
        if not (lines[index] or "").strip().startswith(("---", "|", "+-")):
            index += 1
            continue
        end = index
        while end < len(lines) and _TABLE_LINE.match(lines[end] or "") and (lines[end] or "").strip():
            end += 1
        value = _table([line or "" for line in lines[index:end]]) if end - index >= 3 else None
        if _is_record(value):
            spans.append(Record(CLI_TABLE, Span(index, end - 1, value), tuple(range(index, end))))
        index = max(end, index + 1)
    return spans


def unwrap_table_rows(lines: list[str | None]) -> None:
    """Join the rows the CLI's table wraps a long cell over ("Resource handler returned message:" then
    '"There is not enough memory ...' under an empty first cell) into the row they continue, in place. Only
    in a table the CLI drew (its ``+---+`` rules), where an empty first cell means a wrapped line."""
    start = 0
    while start < len(lines):
        if not (lines[start] or "").strip().startswith("|"):
            start += 1
            continue
        end = start
        while end < len(lines) and _TABLE_LINE.match(lines[end] or "") and (lines[end] or "").strip():
            end += 1
        if any((line or "").strip().startswith("+-") for line in lines[start:end]):
            _unwrap(lines, start, end)
        start = max(end, start + 1)


def _unwrap(lines: list[str | None], start: int, end: int) -> None:
    row: tuple[int, list[str]] | None = None  # the row being continued: its index and cells
    for index in range(start, end):
        line = lines[index] or ""
        if _TABLE_RULE.match(line):
            row = None
            continue
        depth = _depth(line)
        cells = _cells(line, depth)
        if row is not None and len(cells) == len(row[1]) > 1 and not cells[0] and any(cells):
            merged = [f"{a} {b}".strip() for a, b in zip(row[1], cells, strict=True)]
            row = (row[0], merged)
            lines[row[0]] = "|" * depth + " " + " | ".join(merged) + " " + "|" * depth
            lines[index] = None
        elif len(cells) > 1 and cells[0]:
            row = (index, cells)


# --- a console page read through OCR ------------------------------------------------------------------
def _label(line: str) -> tuple[str, str] | None:
    """The API key a line's label shows, and the value after it (empty when on the next line)."""
    text = line.strip()
    best: tuple[float, str, str] | None = None
    for label, key in _CONSOLE_FIELDS.items():
        for cut in range(max(1, len(label) - 2), min(len(text), len(label) + 3) + 1):
            head = text[:cut]
            if cut < len(text) and text[cut].isalnum() and text[cut - 1].isalnum():
                continue  # a label ends at a word's end
            score = fuzz.ratio(head.lower(), label)
            if score >= _LABEL_SCORE and (best is None or score > best[0]):
                best = (score, key, text[cut:].strip(" :\t"))
    return (best[1], best[2]) if best else None


def _status(value: str) -> str | None:
    found = process.extractOne(
        value.replace(" ", ""), _STATUSES, scorer=fuzz.ratio, score_cutoff=_LABEL_SCORE
    )
    return str(found[0]) if found else None


def _console_time(value: str) -> str | None:
    text = re.sub(r"(?<=\d)[Oo]|[Oo](?=\d)", "0", value.strip())
    text = re.sub(r"\s*(?:GMT|UTC)([+-]\d{2}:?\d{2})?\s*$", r" UTC\1", text).replace(" UTC+0000", " UTC")
    for shape in _CONSOLE_DATES:
        for candidate in (text, text.removesuffix(" UTC")):
            try:
                parsed = datetime.strptime(candidate, shape)
            except ValueError:
                continue
            return parsed.replace(tzinfo=UTC).isoformat()
    return None


def _console_value(key: str, value: str) -> Any:
    if key.endswith("Status"):
        return _status(value)
    if key.endswith("Time"):
        return _console_time(value)
    if key == "FailureReason":
        return "" if _EMPTY_VALUE.match(value) else value
    return _scalar(value) if key.endswith("Count") else value


def console_records(lines: list[str | None]) -> list[Record]:
    """A console page's fields, when it shows a status and at least two other fields."""
    record: dict[str, Any] = {}
    used_lines: list[int] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        found = _label(line) if line and len(line.strip()) < 200 else None
        if found is None:
            index += 1
            continue
        key, value = found
        used = index
        if (
            not value
            and index + 1 < len(lines)
            and lines[index + 1] is not None
            and not _label(lines[index + 1] or "")
        ):
            used, value = index + 1, (lines[index + 1] or "").strip()
        parsed = _console_value(key, value)
        if parsed is not None and key not in record:
            record[key] = parsed
            used_lines += range(index, used + 1)
        index = used + 1
    if "InferenceComponentName" in record:
        record["InferenceComponentStatus"] = record.pop("EndpointStatus", None)
        counts = {k: record.pop(k) for k in ("CurrentCopyCount", "DesiredCopyCount") if k in record}
        if counts:
            record["RuntimeConfig"] = counts
    status = record.get("EndpointStatus") or record.get("InferenceComponentStatus")
    if not used_lines or not status or len(record) < _CONSOLE_MIN_FIELDS:
        return []
    return [Record(CONSOLE_OCR, Span(used_lines[0], used_lines[-1], record), tuple(used_lines))]


def find_records(lines: list[str | None]) -> list[Record]:
    """Every record in the lines not yet read, in each layout (the console last: it is the loosest)."""
    found: list[Record] = []
    for reader in (yaml_records, table_records, console_records):
        for record in reader(lines):
            found.append(record)
            for index in record.lines:
                lines[index] = None
    return found
