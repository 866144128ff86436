"""What a benchmark report's rows (``batching``) show of F31 and F32.

- **A list run one by one (F31)**: a list of N inputs sent without ``batch_size`` takes at least 0.8 of N
  single calls at the same input length (the field notes: 510 ms for 32 against 16 ms for one). The
  pipeline looped over the list; on a GPU a real batch costs a fraction of that (8 inputs of 512 tokens
  in 4.4 single calls' time is batched). A first call's row (an engine's build, a load) is no batch's cost, nor
  is a slow run of a batch that also ran fast, and a method that says it passed ``batch_size`` has no list run
  one by one. A body defined once under a
  name ("payload B: {...}") gives its batch to the rows that name it; a row that sums N single calls gives
  one call's latency.
- **Short samples (F32)**: the same batch measured on natural-length samples and again at a fixed, padded
  length at least twice as long, and the padded run at least twice as slow (the field notes: b=8 p50 23.9 ms
  at 59 tokens, 102.8 ms padded to 512). The benchmark's samples hid the cost of long inputs.
"""

from __future__ import annotations

import re

from workflows.diagnosis.batching import Row, passes_batch_size, rows
from workflows.diagnosis.row_words import DEFINITION, LENGTH_SAID, NATURAL, P50, TIME

LINEAR_SHARE = 0.8  # a list's latency over N single calls' at which it ran one by one
MIN_LIST = 4
BATCHED_FASTER = 5.0  # a list without batch_size over the same list with it, at which it was looped
LONGER = 2.0  # the padded run's length over the samples' at least
SLOWER = 2.0  # and its latency over theirs at least

# A first call's row: "first", "cold", "첫", or the call numbered one ("call#1", "call 1:", "req #1").
_FIRST = re.compile(
    r"\b(?:1st|first|cold)\b|첫|\b(?:call|req(?:uest)?|invoke|invocation)\s*#?\s*1(?![\d.,])", re.IGNORECASE
)
# A row measured off the endpoint, in the writer's own process: "32 sentences, 로컬 ORT 직접 batch", "local onnxruntime".
_LOCAL = re.compile(r"로컬|\blocal(?:ly)?\b|\bin-process\b|\bon my (?:laptop|machine)\b", re.IGNORECASE)
# ... or what the writer believed it would take, said after the figure in Korean: "B 가 25ms 근처로 나올 줄 알았음".
_BELIEVED = re.compile(r"줄\s*알았\w*|(?:것|거)\s*(?:으로|로)\s*(?:예상|기대)했\w*")
# What a row was expected to take is no measurement: "기대: batch 32 면 25~30ms", "expected ~25 ms for 32".
_EXPECTED = re.compile(r"\bexpect(?:ed|ing)?\b|\bshould (?:be|take)\b|기대|예상|목표", re.IGNORECASE)


def _same_length(a: Row, b: Row) -> bool:
    """Whether two rows ran inputs of one length, as far as they say: a row on production's inputs, their length not
    given, is not comparable with one whose length is ("~40 tokens" against "production export, lengths not recorded")."""
    if (a.tokens is None) != (b.tokens is None) and (a.production or b.production):
        return False
    return a.tokens is None or b.tokens is None or a.tokens == b.tokens


def _expected(text: str) -> bool:
    """The row's figure is what it was expected to take: the expectation comes before its first time ("기대: 25ms"),
    not after it as an aside on a measurement ("510ms (기대치 25ms 전후)")."""
    expected = _EXPECTED.search(text)
    timed = P50.search(text) or TIME.search(text)
    return _BELIEVED.search(text) is not None or (
        expected is not None and (timed is None or expected.start() < timed.start())
    )


def one_by_one(lines: list[str]) -> tuple[Row, Row] | None:
    """A single call's row and a list's row sent without ``batch_size`` that took about N single calls."""
    found = rows(lines)
    # A line measured in parts ("With {... batch_size: 32} we measured 25 ms. No errors.") is a measured line too.
    measured = {line for line in lines if any(row.text.strip() and row.text.strip() in line for row in found)}
    if any(passes_batch_size(line) for line in lines if line not in measured and not DEFINITION.match(line)):
        return None  # the method passed batch_size to every list
    found = [
        row
        for row in found
        if not (row.first or _FIRST.search(row.text) or _expected(row.text) or _LOCAL.search(row.text))
    ]
    singles = [r for r in found if r.batch == 1 and not r.batch_param]
    lists = [r for r in found if (r.batch or 0) >= MIN_LIST and not r.batch_param]

    def looped(single: Row, listed: Row) -> bool:
        return _same_length(single, listed) and listed.ms >= LINEAR_SHARE * (listed.batch or 0) * single.ms

    # A batch's cost is its fastest run: a slow run of a batch that also ran fast paid a one-time cost (an engine
    # built for the new shape, a load), not a loop over its inputs.
    pairs = [
        (single, listed)
        for single in singles
        for listed in lists
        if looped(single, listed)
        and all(
            looped(single, other)
            for other in lists
            if other.batch == listed.batch and _same_length(other, listed)
        )
    ]
    if pairs:
        return max(pairs, key=lambda pair: pair[1].ms / pair[0].ms)
    # ... or the same list sent with batch_size, BATCHED_FASTER times faster: the one without it was looped.
    batched = [row for row in found if (row.batch or 0) >= MIN_LIST and row.batch_param]
    return next(
        (
            (fast, listed)
            for listed in lists
            for fast in batched
            if fast.batch == listed.batch
            and _same_length(fast, listed)
            and listed.ms >= BATCHED_FASTER * fast.ms
        ),
        None,
    )


def hidden_by_samples(lines: list[str]) -> tuple[Row, Row] | None:
    """A row on natural-length samples and one at a padded length, the same batch, the padded one slower."""
    found = rows(lines)
    # A length the paste gives as its samples' ("벤치 샘플: 평균 59 토큰 문장") tells a row at that length as theirs.
    samples = {int(n) for line in lines if NATURAL.search(line) for n in LENGTH_SAID.findall(line)}
    pairs = [
        (short, long)
        for short in found
        if (short.natural or short.tokens in samples) and not short.fixed and not short.production
        for long in found
        if (long.fixed or long.production)
        and (long.batch == short.batch or (long.production and long.batch is None))
        and long.tokens is not None  # a padded or a production run says how long its inputs were
        and (short.tokens is None or long.tokens >= LONGER * short.tokens)
        and long.ms >= SLOWER * short.ms
    ]
    return max(pairs, key=lambda pair: pair[1].ms / pair[0].ms) if pairs else None
