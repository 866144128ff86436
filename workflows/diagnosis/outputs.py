"""Facts about what the served model answered: a prediction table that holds one label (F29), label counts of
the quantized model with one label holding them all (F29), and the architecture a server says it resolved
against the one the run converted (F26)."""

from __future__ import annotations

import re
from collections import Counter

from workflows.diagnosis.evidence import Evidence

_LABEL = re.compile(r"[a-z_][\w-]{0,40}|label_\d+|\d")
_NUMBER = re.compile(r"\d")
_PRECISION = re.compile(r"int8|quant|qdq|\bq8\b", re.IGNORECASE)
# A prediction table shorter than this says nothing about a collapse.
MIN_TABLE_ROWS = 4
_RESOLVED_ARCHITECTURE = re.compile(r"Resolved architecture: ?(?P<architecture>[A-Za-z0-9_]+)")


def _cells(text: str) -> list[str]:
    return [cell.strip().strip("`'\"").lower() for cell in text.strip().strip("|").split("|")]


def predictions_collapsed(evidence: Evidence) -> bool | None:
    """F29 as a table: a label column whose every row is the same label, beside one that varies.

    Rows are pasted table lines (``| text | fp32 | int8 |``, rules and headers included); a column
    of labels is one whose cells are each one word. With no table of at least MIN_TABLE_ROWS rows
    the evidence cannot tell.
    """
    rows = [
        _cells(item.text)
        for item in evidence.items
        if item.source in ("text", "logs") and not item.whole and item.text.count("|") >= 2
    ]
    widths = Counter(len(row) for row in rows)
    if not widths:
        return None
    width, count = widths.most_common(1)[0]
    table = [row for row in rows if len(row) == width]
    if count < MIN_TABLE_ROWS + 1 or width < 2:
        return None
    header, data = table[0], table[1:]
    labels = [
        column
        for column in range(width)
        if all(_LABEL.fullmatch(row[column]) for row in data)
        and not all(_NUMBER.fullmatch(row[column]) for row in data)
    ]
    constant = [c for c in labels if len({row[c] for row in data}) == 1]
    varying = [c for c in labels if len({row[c] for row in data}) > 1]
    quantized = [c for c in constant if _PRECISION.search(header[c])]
    return bool(constant and (varying or quantized))


# A label and its count: "entailment 712", "neutral: 2000", "LABEL_0 = 3" (a label's digits stay its own).
_LABEL_COUNT = re.compile(
    r"\b(?P<label>[A-Za-z_][\w-]*?)(?:\s*[:=]\s*|\s+)(?P<count>\d[\d,]*)(?![\d.,]*\d)(?!\.)"
)
_INTEGER = re.compile(r"\d[\d,]*")
# Three or more counts separated by slashes, an NLI head's labels in a header's order: "0 / 500 / 0".
_COUNT_TUPLE = re.compile(r"(?<![\d.:/])\d+(?:\s*/\s*\d+){2,}(?![\d.:/])")


def _one_label(counts: list[int]) -> bool:
    return len(counts) >= 2 and sum(1 for n in counts if n) == 1


def label_counts_collapsed(evidence: Evidence) -> bool | None:
    """F29 as counts: the quantized model's label counts, in a line ("int8 : entailment 0 / neutral 2000 /
    contradiction 0") or in its row of a table whose other columns are the labels, all in one label; None
    where no quantized model's counts are shown."""
    items = [item for item in evidence.items if item.source in ("text", "logs") and not item.whole]
    texts = [item.text for item in items]
    for index, item in enumerate(items):
        if "|" in item.text:
            continue
        found = list(_LABEL_COUNT.finditer(item.text))
        counts = [int(m.group("count").replace(",", "")) for m in found]
        # A distribution in percent ("entailment 0% / neutral 100% / contradiction 0%") is a model's whole output;
        # which model's, the rule's requires asks of the paste (INT8 or quantization in it).
        shares = all(item.text[m.end() : m.end() + 1] == "%" for m in found) and 100 in counts
        if _one_label(counts) and (shares or _PRECISION.search(item.text)):
            return True
        # ... or a classifier's labels only, the quantized model named a few lines above ("quantize_dynamic(...)",
        # then "예측 결과: neutral 500 / entailment 0 / contradiction 0").
        labels_only = found and all(_CLASS_LABEL.fullmatch(m["label"]) for m in found)
        if (
            labels_only
            and _one_label(counts)
            and sum(counts) >= MIN_TABLE_ROWS
            and _named_above(texts, index)
        ):
            return True
        # A dict of its label counts ("int8  acc=0.318  label dist: {'neutral': 500}"): one label, or all in one.
        # ... its model named on its line or in the cell that printed it ("In [22]: evaluate(session_int8, ...)").
        printed_by = " ".join(i.text for i in items[max(0, index - 3) : index + 1])
        for shown in _DICT.finditer(item.text) if _PRECISION.search(printed_by) else ():
            pairs = [(m[1] or m[3], m[2] or m[4]) for m in _DICT_PAIR.finditer(shown.group())]
            if pairs and all(re.fullmatch(r"\d+", value.strip()) for _, value in pairs):
                entries = [int(value) for _, value in pairs]
                if (len(entries) == 1 and entries[0] >= MIN_TABLE_ROWS) or _one_label(entries):
                    return True
        # The counts without their labels, which a header names ("int8-dyn  0.324  0 / 500 / 0").
        bare = _COUNT_TUPLE.search(item.text) if _PRECISION.search(item.text) else None
        if bare and _one_label([int(n) for n in re.split(r"\s*/\s*", bare.group())]):
            return True
    unpiped = [item.text for item in items if "|" not in item.text]
    if _columns_collapsed(unpiped) or _row_under_labels(unpiped):
        return True
    if _counted_once([item.text for item in items]) or _listed_per_line([item.text for item in items]):
        return True
    rows = [_cells(item.text) for item in items if item.text.count("|") >= 2]
    for row in rows:
        if row and _PRECISION.search(row[0]):
            counts = [int(cell.replace(",", "")) for cell in row[1:] if _INTEGER.fullmatch(cell)]
            # ... or the labels and their counts in one cell of the row: "| int8 | 0.342 | ent 0 / neu 1000 / con 0 |".
            labelled = [
                int(m["count"].replace(",", "")) for cell in row[1:] for m in _LABEL_COUNT.finditer(cell)
            ]
            # ... or bare in one cell, in the order its header names: "| int8 | 0.331 | 0 / 1000 / 0 |", the first
            # count's label written and the rest left to the header's order ("neutral 500 / 0 / 0").
            tuples = [
                [int(n) for n in re.split(r"\s*/\s*", bare.group())]
                for cell in row[1:]
                if (bare := _COUNT_TUPLE.fullmatch(re.sub(r"^[A-Za-z_][\w-]*\s+(?=\d)", "", cell)))
            ]
            if _one_label(counts) or _one_label(labelled) or any(_one_label(found) for found in tuples):
                return True
    return None


_METRIC = re.compile(r"\d[\d,]*(?:\.\d+)?%?|ms|s|p\d\d")


def _columns_collapsed(lines: list[str]) -> bool:
    """Labels as rows and models as columns ("fp32  int8" over "neutral  161  500"): the quantized model's column
    holds all its count in one label."""
    header: list[str] = []
    column: list[int] = []
    for line in lines:
        words = line.split()
        if (
            words
            and all(_INTEGER.fullmatch(w) for w in words[1:])
            and len(words) == len(header) + 1
            and header
        ):
            column += [
                int(words[1 + i].replace(",", "")) for i, head in enumerate(header) if _PRECISION.search(head)
            ][:1]
            continue
        if header and words and all(_METRIC.fullmatch(w) for w in words[1:]) and len(words) > len(header):
            continue  # a metric's row among the counts ("accuracy  0.857  0.334", "latency p50  52 ms  31 ms")
        if _one_label(column):
            return True
        names = bool(words) and all(
            re.search(r"[A-Za-z]", w) for w in words
        )  # a header names, it counts nothing
        header = words if names and any(_PRECISION.search(w) for w in words) else []
        column = []
    return _one_label(column)


# A header whose last columns are an NLI head's labels ("model  acc  entailment  neutral  contradiction").
_NLI_LABEL = re.compile(r"entailment|neutral|contradiction|label_\d+|ent|neu|con", re.IGNORECASE)


def _row_under_labels(lines: list[str]) -> bool:
    """Models as rows and labels as columns, aligned by spaces ("int8-dyn  0.334  0  500  0" under "model  acc
    entailment  neutral  contradiction"): the quantized model's counts under the labels, all in one."""
    labels: list[int] = []
    for line in lines:
        words = line.split()
        named = [i for i, word in enumerate(words) if _NLI_LABEL.fullmatch(word)]
        if len(named) >= 2 and all(re.search(r"[A-Za-z]", word) for word in words):
            labels = named
            continue
        if labels and words and _PRECISION.search(words[0]) and len(words) > max(labels):
            cells = [words[i] for i in labels]
            if all(_INTEGER.fullmatch(cell) for cell in cells) and _one_label(
                [int(c.replace(",", "")) for c in cells]
            ):
                return True
    return False


_VALUE_COUNTS = re.compile(r"\.value_counts\(")
# A dict of counts, or Counter.most_common()'s list of pairs ("[('neutral', 500)]").
_DICT = re.compile(r"\{[^{}]*\}|\[\s*\(\s*['\"][^\]]*\)\s*\]")
# ... its keys quoted ("{'neutral': 500}") or bare, as a summary writes them ("{neutral: 500}"), or a pair's.
_DICT_PAIR = re.compile(
    r"['\"]([^'\"]+)['\"]\s*[:,]\s*([^,})]+)|(?<![\w'\"])([A-Za-z_][\w-]*)\s*:\s*([^,}]+)"
)
_COUNT_ROW = re.compile(r"^\s*(?:Out\[\d+\]:\s*)?(?P<label>[A-Za-z_][\w-]*)\s+(?P<count>\d[\d,]*)\s*$")


def _counted_once(lines: list[str]) -> bool:
    """pandas' value_counts of the quantized model's predictions listing one label ("neutral    200", then
    "Name: count"): every prediction was that label. A Counter of them prints a dict, which label_counts_collapsed
    reads with the cell that printed it."""
    for index, line in enumerate(lines):
        if not (_VALUE_COUNTS.search(line) and _PRECISION.search(line)):
            continue
        rows = []
        for after in lines[index + 1 : index + 12]:
            if after.lstrip().startswith(("Name:", "dtype")) or "value_counts" in after:
                break
            if found := _COUNT_ROW.match(after):
                rows.append(int(found["count"].replace(",", "")))
        if len(rows) == 1 and rows[0] >= MIN_TABLE_ROWS:
            return True
    return False


# A classifier's label, not a load test's counter ("errors 0", "requests 500"): an NLI head's, a sentiment head's, a
# label's default name.
_CLASS_LABEL = re.compile(
    r"entailment|neutral|contradiction|positive|negative|label_\d+|class_?\d+", re.IGNORECASE
)


def _named_above(lines: list[str], index: int) -> bool:
    """A quantized model named in the few lines above line ``index``, the counts under it being that model's."""
    return bool(_PRECISION.search(" ".join(lines[max(0, index - 4) : index])))


def _listed_per_line(lines: list[str]) -> bool:
    """The quantized model's label counts one to a line, under the line that names it ("XNLI dev 500건 돌려보니:"
    after "quantize_dynamic(..., weight_type=QuantType.QInt8)", then "entailment 0", "neutral 0", "contradiction
    500"): two or more labels, all the count in one. The model is named within the few lines above the list."""
    index = 0
    while index < len(lines):
        block: list[int] = []
        while (
            index + len(block) < len(lines)
            and (row := _COUNT_ROW.match(lines[index + len(block)]))
            and _CLASS_LABEL.fullmatch(row["label"])
        ):
            block.append(int(row["count"].replace(",", "")))
        if (
            len(block) >= 2
            and sum(block) >= MIN_TABLE_ROWS
            and _one_label(block)
            and _named_above(lines, index)
        ):
            return True
        index += len(block) or 1
    return False


def resolved_architecture(evidence: Evidence) -> str | None:
    """The architecture a vLLM server says it resolved, from its start-up log."""
    for item in evidence.items:
        match = _RESOLVED_ARCHITECTURE.search(item.text)
        if match:
            return match.group("architecture")
    return None


def served_model_mismatch(evidence: Evidence) -> bool | None:
    """F26: the server resolved another architecture than the one the run converted."""
    resolved = resolved_architecture(evidence)
    if resolved is None or evidence.expected_architecture is None:
        return None
    return resolved != evidence.expected_architecture
