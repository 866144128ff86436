"""A benchmark report's table, by its columns: what each column of a header holds (latency, batch, call, length), a
unit written apart from its column, latency columns that each name their batch, and a row aligned by spaces matched to
its header's columns from the right."""

from __future__ import annotations

import re

NUMBER = r"\d+(?:\.\d+)?"
_EMPTY = re.compile(r"[-—–]|n/?a", re.IGNORECASE)  # a cell with no figure: "req/s  -"
_FIGURE = re.compile(rf"{NUMBER}\s*(?:ms|s|%|/s)?", re.IGNORECASE)
# A cell with a figure: a header has none but its percentiles' names (p50, p99) and units.
_NUMBER_CELL = re.compile(r"(?<![pP])\b\d")
_HEADS = {
    "latency": re.compile(r"^(?:p50|median|latency|mean|avg)(?:_?ms)?\b", re.IGNORECASE),
    # ... or the count of inputs a request carried ("입력 수", "건수", "# inputs", "n_inputs").
    "batch": re.compile(
        r"^(?:b|bs|n|batch(?:[ _-]?size)?|배치|건수|입력\s*수|(?:#|n_?)\s*inputs?|inputs?\s*#"
        r"|(?:inputs?|texts?|sentences?|items?) per (?:request|call))$",  # "| inputs per request |"
        re.I,
    ),
    # A call's number in its run ("call#", "req #"): call 1 of a shape pays its one-time cost.
    "call": re.compile(r"^(?:call|req(?:uest)?)\s*(?:#|no\.?|number)?$|^#$", re.IGNORECASE),
    "length": re.compile(
        r"^(?:seq\w*|tokens?|input(?!s?\s*#)|inputs(?!\s*#)|sample|samples|length|길이|입력(?!\s*수))\b",
        re.IGNORECASE,
    ),
}


_UNIT_WORD = re.compile(r"[(\[]?(?:ms|s|sec)[)\]]?|\(p\d\d\)", re.IGNORECASE)


def with_units(words: list[str]) -> list[str]:
    """A space-aligned header's words, a unit or a percentile written apart joined to the column it follows ("p50 ms",
    "latency_ms (p50)" are one)."""
    joined: list[str] = []
    for word in words:
        if joined and _UNIT_WORD.fullmatch(word) and not _FIGURE.fullmatch(joined[-1]):
            joined[-1] = f"{joined[-1]} {word}"
        else:
            joined.append(word)
    return joined


_BATCH_LATENCY = re.compile(
    r"(?:b|bs|batch)\s*[=:]?\s*(\d+)\s+(?:p50|median|latency|mean|avg)\b", re.IGNORECASE
)


def batch_columns(cells: list[str]) -> dict[int, int]:
    """A header's latency columns that each name their batch ("b=1 p50", "b=8 p50"): batch -> column."""
    return {
        int(m.group(1)): i for i, cell in enumerate(cells) if (m := _BATCH_LATENCY.fullmatch(cell.strip()))
    }


def batch_heads(line: str) -> list[int]:
    """A space-aligned header's latency columns that each name their batch, in order ("샘플 세트  b=1 p50  b=8 p50")."""
    # Other columns may name a batch too ("b=8 처리량"): that number is no figure.
    named = re.sub(r"\b(?:b|bs|batch)\s*[=:]?\s*\d+", "", line, flags=re.IGNORECASE)
    return [] if _NUMBER_CELL.search(named) else [int(m.group(1)) for m in _BATCH_LATENCY.finditer(line)]


_PERCENTILES = re.compile(r"\bp(?:50|90|95|99)\b", re.IGNORECASE)


def header(cells: list[str]) -> dict[str, int] | None:
    """A header row's columns by kind, where the row names a latency column and holds no figure."""
    # Each kind's first column; a column the batch claims ("inputs per request") is no length column.
    heads: dict[str, int] = {}
    for kind, head in _HEADS.items():
        taken = set(heads.values()) if kind == "length" else set()
        found = [i for i, c in enumerate(cells) if head.match(c) and i not in taken]
        if found:
            heads[kind] = found[0]
    if "latency" not in heads or any(_NUMBER_CELL.search(c) for c in cells):
        return None
    # Beside a latency distribution's percentiles ("| n | p50 ms | p90 ms | p99 ms |"), "n" counts the samples.
    if (
        "batch" in heads
        and cells[heads["batch"]].strip().lower() == "n"
        and len(_PERCENTILES.findall(" ".join(cells))) >= 2
    ):
        del heads["batch"]
    return heads


def aligned_cells(words: list[str], width: int) -> list[str]:
    """A space-aligned row's cells under a header of ``width`` columns: its trailing figures fill the last
    columns, the words before them the first ("샘플(58 토큰)  8  24.1  28.8  332")."""
    figures = 0
    while figures < len(words) and (
        _FIGURE.fullmatch(words[len(words) - 1 - figures])
        or _EMPTY.fullmatch(words[len(words) - 1 - figures])
    ):
        figures += 1
    figures = min(figures, width - 1)
    if figures < 2:
        return []
    label = " ".join(words[: len(words) - figures])
    return [label, *[""] * (width - 1 - figures), *words[len(words) - figures :]]
