"""A benchmark report's rows, by batch and input length, as F31 and F32 are read from them.

F31 and F32 raise no error; a report's figures show them. Each row of a report (a line, or a table row under a
header that names its columns) is read for its latency (its p50, else its first figure in ms or s), its batch
(``b=8``, ``batch 32``, a batch column, ``[32 premises]``, a single string in ``"inputs"``), its input length
(``59 tok``, ``padded 512``, a length column) and whether it passed the pipeline a ``batch_size``. A line that
gives two p50s is two rows; a table aligned by spaces has its figures matched to its header from the right.
What the rows show is read in ``batch_verdicts``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from workflows.diagnosis.polarity import polarity
from workflows.diagnosis.report_columns import NUMBER as _NUMBER
from workflows.diagnosis.report_columns import aligned_cells, batch_columns, batch_heads, header, with_units
from workflows.diagnosis.row_words import (
    BATCH,
    BATCH_PARAM,
    DEFINITION,
    FIXED,
    NATURAL,
    P50,
    PADDED,
    PRODUCTION,
    SINGLE,
    SUM,
    TIME,
    TOKENS,
    first_number,
)
from workflows.diagnosis.tables import pipe_cells


def passes_batch_size(text: str) -> bool:
    """Whether the text says a batch_size was passed: one it says was not ("parameters 에 batch_size 안 넣었음",
    "no batch_size in the payload") or is to be ("batch_size 항상 넣도록 수정") passes none."""
    return any(polarity(text, m.start(), m.end()).polarity == "affirmed" for m in BATCH_PARAM.finditer(text))


# A block's label: a line that ends with a colon and gives no figure of its own ("Benchmark (pre-launch):").
_LABEL = re.compile(r":\s*$")
# ... or, where no block is open, a line that leads with its label ("Benchmark (pre-launch): locust, b=8, samples").
_LEADING_LABEL = re.compile(r"^(?!\s*\d)[^:]{1,40}:\s")


@dataclass(frozen=True)
class Row:
    """One measured row of a report."""

    text: str
    ms: float
    batch: int | None
    tokens: int | None
    batch_param: bool
    natural: bool
    fixed: bool
    production: bool = False
    first: bool = False  # the first call of its run, by a table's call column


def _ms(value: str, unit: str | None) -> float:
    return float(value) * (1.0 if (unit or "ms").lower() == "ms" else 1000.0)


def _latency(text: str) -> float | None:
    found = P50.search(text) or TIME.search(text)
    return _ms(found.group("value"), found.group("unit")) if found else None


def _row(
    text: str,
    columns: dict[str, int],
    cells: list[str],
    defined: dict[str, str] | None = None,
    context: str = "",
) -> Row | None:
    """One measured row; ``context`` is its block's label and the lines under it that gave no figure, whose batch,
    length and kind of inputs the row takes where it states none."""

    def cell(kind: str) -> str:
        index = columns.get(kind)
        return cells[index] if index is not None and index < len(cells) else ""

    ms = _latency(cell("latency")) if cell("latency") else _latency(text)
    if (
        cell("latency")
        and ms is None
        and (bare := re.match(rf"\s*({_NUMBER})(?:\s+{_NUMBER})*\s*$", cell("latency")))
    ):
        ms = float(bare.group(1))
    if ms is None or ms <= 0:
        return None
    named = next(
        (
            body
            for label, body in (defined or {}).items()
            if (cells and re.match(rf"{re.escape(label)}\b", cells[0], re.I))
            or re.search(rf"payload\s*{re.escape(label)}\b", text, re.I)
        ),
        "",
    )
    text_and_body = f"{text} {named}"
    batch = int(cell("batch")) if cell("batch").isdigit() else first_number(BATCH, text_and_body)
    if batch is None and SINGLE.search(text_and_body):
        batch = 1
    if batch == 1 and (summed := SUM.search(text)):
        ms /= int(next(g for g in summed.groups() if g))
    length_cell = cell("length")
    tokens = first_number(TOKENS, text)
    if tokens is None and (number := re.search(r"\d{2,4}", length_cell)):
        tokens = int(number.group())
    # A table's row is told by its length cell and its first cell ("padded-to-512"), a line by its words.
    own = f"{length_cell} {cells[0]}" if columns and cells and length_cell else length_cell or text
    label = f"{own} {context}"
    return Row(
        text,
        ms,
        batch if batch is not None else first_number(BATCH, context),
        tokens if tokens is not None else first_number(TOKENS, context),
        passes_batch_size(text_and_body),
        bool(NATURAL.search(label)),
        # A row that states no length of its own takes its block label's padding ("Re-run, padded to 512 tokens:").
        bool(FIXED.search(own) or (tokens is None and PADDED.search(context.split("\n")[0]))),
        bool(PRODUCTION.search(label)),
        cell("call").strip() == "1",
    )


def rows(lines: list[str]) -> list[Row]:
    """Every row the lines give a latency for, in order."""
    return list(_rows(tuple(lines)))


@lru_cache(maxsize=4)
def _rows(lines: tuple[str, ...]) -> tuple[Row, ...]:  # the facts and their details read the same lines
    found: list[Row] = []
    columns: dict[str, int] = {}
    defined = {
        m.group("label").lower(): f"{m.group('note') or ''} {m.group('body')}"
        for line in lines
        if (m := DEFINITION.match(line)) and _latency(line) is None
    }
    width = 0  # the columns of a table aligned by spaces, whose header set ``columns``
    context = ""  # the label of the block the lines are in, with its lines that give no figure
    head = ""  # the length column's name in the table being read: "tokens(avg)" says its lengths are averages
    # A header's latency columns and what each ran: "| b=8 p50 |", "| p50 (512 tok) |".
    per_batch: dict[int, str] = {}
    per_batch_piped = False  # ... in a piped table, or in one aligned by spaces
    variants: list[str] = []  # a spaced header's run labels, a figure under each
    for line in lines:
        piped = line.count("|") >= 2
        cells = pipe_cells(line) if piped else with_units(line.split())
        if batches := _batch_header(line, cells, piped, context):
            per_batch, per_batch_piped, columns = batches, piped, {}
            continue
        if per_batch and piped == per_batch_piped and (texts := _per_batch(line, cells, piped, per_batch)):
            found += [row for text in texts if (row := _row(text, {}, [], defined, context))]
            continue
        per_batch = per_batch if piped else {}
        if (heads := header(cells)) is not None and (piped or len(cells) >= 3):
            columns, width = heads, 0 if piped else len(cells)
            head = cells[heads["length"]] if "length" in heads else ""
            continue
        if piped and (columns or len(P50.findall(line)) < 2):
            if row := _row(line, columns, cells, defined, f"{context}\n{head}" if columns else context):
                found.append(row)
            continue
        if width and (aligned := aligned_cells(cells, width)):
            if row := _row(line, columns, aligned, defined, f"{context}\n{head}"):
                found.append(row)
            continue
        columns, width, head = {}, 0, ""
        # Under a header of the runs' labels ("natural(59tok)   fixed 512"), a line's figures are one per run.
        times = list(TIME.finditer(line))
        if len(variants) >= 2 and len(times) == len(variants) and (said := line[: times[0].start()].strip()):
            texts = [f"{name} {said} {time.group()}" for name, time in zip(variants, times, strict=True)]
            found += [row for text in texts if (row := _row(text, {}, [], defined, context))]
            continue
        variants = _run_labels(line) if not times else []
        # A block's label opens its context; the lines under it that give no figure add to it.
        if _latency(line) is None:
            if _LABEL.search(line):
                context = line  # the block's label: "Production, week 1:"
            elif (not context or context.startswith("\n")) and _LEADING_LABEL.match(line):
                # A line that leads with a label opens a block and labels none of its rows; the next such line opens
                # the next ("Benchmark (last sprint): ... 59 tokens", then "Prod (week 1): ... 512 tokens").
                context = f"\n{line}"
            elif context:
                context = f"{context}\n{line}"
            continue
        if changed := _before_after(line, defined, context):
            found += changed
            continue
        # A line's later measurements are read under its first, then its block ("고정 512 로 다시 측정: b=1 ... / b=8 ..."),
        # share the batch the first names ("b=8 short p50 24ms, padded p50 103ms"), and its label's length where
        # they state none ("natural(59 tok)  b=1 p50 23.2ms  b=8 p50 23.9ms").
        texts = _measurements(line)
        under = [context, *[f"{texts[0]}\n{context}"] * (len(texts) - 1)]
        parts = [
            row
            for part, label in zip(texts, under, strict=True)
            if (row := _row(part, {}, [], defined, label))
        ]
        found += [_sharing(row, parts[0]) for row in parts]
    return tuple(found)


def _batch_header(line: str, cells: list[str], piped: bool, context: str) -> dict[int, str]:
    """A header's latency columns, two or more, that each name their batch ("| b=1 p50 | b=8 p50 |"), or, under a
    batch column, their input length ("| batch | p50 (59 tok) | p50 (512 tok) |"): column -> what its figures ran.
    The longest length ran padded where the block's label pads ("재측정 (padding=\"max_length\", max_length=512):")."""
    if not piped:
        heads = batch_heads(line)
        return {i: f"b={batch}" for i, batch in enumerate(heads)} if len(heads) >= 2 else {}
    if len(batches := batch_columns(cells)) >= 2:
        return {i: f"b={batch}" for batch, i in batches.items()}
    lengths = {
        i: int(m["n"]) for i, cell in enumerate(cells) if (m := _LENGTH_LATENCY.fullmatch(cell.strip()))
    }
    if len(lengths) < 2 or not cells or not _BATCH_HEAD.fullmatch(cells[0].strip()):
        return {}
    padded = max(lengths.values()) if PADDED.search(context) else None
    return {i: f"{'padded ' if n == padded else ''}{n} tok" for i, n in lengths.items()}


def _per_batch(line: str, cells: list[str], piped: bool, per_batch: dict[int, str]) -> list[str]:
    """A row under such a header as one text per column, each told by the row's first cell ("| 512 고정 (pad to
    max) | ... |"), or, under a length header, batched as the first cell says ("| 8 | 23.9 ms | 102.8 ms |"). A table
    aligned by spaces gives its times in its columns' order, told by the words before them ("자연문장 (평균 59토큰)
    23.2ms  23.9ms  330/s" under "샘플 세트  b=1 p50  b=8 p50  b=8 처리량")."""
    if piped:
        if len(cells) <= max(per_batch):
            return []
        by_length = not next(iter(per_batch.values())).startswith("b=")
        lead = f"b={cells[0]}" if by_length and cells[0].strip().isdigit() else cells[0]
        return [f"{lead} {ran} p50 {cells[i]}" for i, ran in per_batch.items()]
    times = list(TIME.finditer(line))
    if len(times) < len(per_batch):
        return []
    said = line[: times[0].start()].strip()
    return [f"{said} {ran} p50 {times[i].group()}" for i, ran in per_batch.items()]


# A latency column named for the input length it ran ("p50 (512 tok)"), under a batch column ("batch", "b", "bs").
_LENGTH_LATENCY = re.compile(
    r"(?:p50|median|latency)\s*\(?\s*(?P<n>\d{2,4})\s*-?\s*(?:tok\w*|토큰)\s*\)?", re.I
)
_BATCH_HEAD = re.compile(r"b|bs|batch(?:[ _-]?size)?|배치", re.IGNORECASE)


def _run_labels(line: str) -> list[str]:
    """A header's run labels ("natural(59tok)   fixed 512"), split where the kind changes; none unless both kinds."""
    marks = sorted(
        [(m.start(), 0) for m in NATURAL.finditer(line)] + [(m.start(), 1) for m in FIXED.finditer(line)]
    )
    starts = [at for i, (at, kind) in enumerate(marks) if i == 0 or kind != marks[i - 1][1]]
    if ":" in line or len({kind for _, kind in marks}) < 2:
        return []
    # A label's length may lead its word: "59-tok sample   512 fixed" is "59-tok sample" and "512 fixed".
    starts = [at - len(lead.group()) if (lead := _LEAD.search(line, 0, at)) else at for at in starts]
    return [line[a:b].strip() for a, b in zip(starts, [*starts[1:], len(line)], strict=True)]


_LEAD = re.compile(r"(?<!\S)\d{2,4}(?:-?tok\w*)?\s+$", re.IGNORECASE)


def _sharing(row: Row, first: Row) -> Row:
    """A line's later measurement with what its first one says and it does not: the batch, the length, and whether
    the inputs were the samples' own or padded."""
    if row.batch is None:
        row = replace(row, batch=first.batch)
    if first_number(TOKENS, row.text) is None and first.tokens is not None:
        row = replace(row, tokens=first.tokens)
    if not (NATURAL.search(row.text) or FIXED.search(row.text)):
        row = replace(row, natural=first.natural, fixed=first.fixed)
    return row


_ARROW = re.compile(r"\s(?:->|→|=>|vs\.?)\s")  # "23.9 ms -> 102.8 ms", "23.9ms (59 tok) vs 102.8ms (512)"


def _before_after(line: str, defined: dict[str, str], context: str) -> list[Row]:
    """A figure before and after the change its block names ("b=8 p50: 23.9 ms -> 102.8 ms" under "re-measured
    padded to 512:"): the after row is the block's, the before row is what ran before it, the samples' own length
    where the change was a padding."""
    arrow = _ARROW.search(line)
    # The after side is a figure of its own ("-> 102.8 ms"), not words about the before ("→ 건당 16ms × 32").
    arrow = arrow if arrow and re.match(r"\s*(?:p50\W*)?\d", line[arrow.end() :]) else None
    before = _row(line[: arrow.start()], {}, [], defined, "") if arrow else None
    if not arrow or before is None or (after := _row(line[arrow.end() :], {}, [], defined, context)) is None:
        return []
    return [
        replace(before, natural=before.natural or after.fixed),
        replace(after, text=line, batch=after.batch if after.batch is not None else before.batch),
    ]


def _own_batches(parts: list[str]) -> bool:
    """Each part names a batch of its own, none the same."""
    batches = [first_number(BATCH, part) for part in parts]
    return None not in batches and len(set(batches)) == len(batches)


_SINGLE_ASIDE = re.compile(r"\(\s*((?:single|one call|a single call|단건|1건)\b[^()]*)\)", re.IGNORECASE)
_RUNS_APART = re.compile(r"\s(?:/|vs\.?|against)\s")


def _measurements(line: str) -> list[str]:
    """A line's parts, one per p50 it gives ("단건 p50 20 ms, 리스트 b=8 p50 158 ms" is two rows), or one per
    sentence where its sentences each time something ("... 보냈더니 510ms. 단건은 약 16ms.")."""
    ends = [m.end() for m in P50.finditer(line)]
    # ... or one per run set side by side, the samples' own against a padded one ("b=8 natural 23.9 ms p50 /
    # fixed-512 102.8 ms").
    runs = [part for part in _RUNS_APART.split(line) if part.strip()]
    if len(ends) < 2 and len(runs) >= 2 and all(TIME.search(part) for part in runs):
        fixed = [bool(FIXED.search(part)) for part in runs]
        if any(fixed) and any(
            NATURAL.search(part) and not pad for part, pad in zip(runs, fixed, strict=True)
        ):
            return runs
        # ... or batches side by side, each part naming its own ("batch 1: 17 ms / batch 32: 510 ms").
        if _own_batches(runs):
            return runs
    # ... parted by commas too ("b=1: 16ms, b=32: 510ms").
    listed = [part for part in re.split(r"[,;]\s+", line) if TIME.search(part)]
    if len(ends) < 2 and len(listed) >= 2 and _own_batches(listed):
        return listed
    # ... or an aside that times one call beside the list's time ("latency 510 ms  (single 16 ms × 32 ≈ 512)").
    aside = _SINGLE_ASIDE.search(line)
    if len(ends) < 2 and aside and TIME.search(aside.group(1)) and TIME.search(line[: aside.start()]):
        return [line[: aside.start()] + line[aside.end() :], aside.group(1)]
    if len(ends) < 2:
        sentences = [part for part in re.split(r"(?<=[.!?])\s+", line) if part.strip()]
        timed = [part for part in sentences if TIME.search(part)]
        return sentences if len(timed) >= 2 else [line]
    starts = [0, *ends[:-1]]
    return [line[start:end] for start, end in zip(starts, ends, strict=True)]
