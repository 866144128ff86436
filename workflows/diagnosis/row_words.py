"""The words a benchmark report's rows are read by (``batching``): a row's p50 or time, its batch, its input length,
whether it passed a batch_size, and whether it ran the samples' own lengths, a padded length or production's."""

from __future__ import annotations

import re

from workflows.diagnosis.report_columns import NUMBER

P50 = re.compile(rf"\bp50\b\W{{0,3}}(?P<value>{NUMBER})\s*(?P<unit>ms|s)?\b", re.IGNORECASE)
# ... a time per request too ("510 ms/request"), not a rate ("330/s").
TIME = re.compile(
    rf"(?<![\w.])(?P<value>{NUMBER})\s*(?P<unit>ms|s|sec|초)(?!\w|/(?!req(?:uest)?\b))", re.IGNORECASE
)
BATCH = (
    re.compile(r"\"batch_size\"\s*:\s*(\d+)"),
    re.compile(r"\b(?:b|bs|batch(?:[ _-]?size)?)\s*[=:]\s*(\d+)\b", re.IGNORECASE),
    re.compile(r"\bbatch(?:[ _-]?size)?\s+(\d+)\b|배치\s*(\d+)", re.IGNORECASE),
    re.compile(r"\[\s*(?:\.{2,}\s*)?(\d+)\s+(?:[a-z]+|문장|개)"),
    re.compile(
        r"\b(\d+)\s*-?\s*(?:texts?|pairs?|inputs?|sentences?|premises?|documents?|items?|문장|개 문장)\b"
    ),
    re.compile(r"(?<![\d.])(\d+)\s*개\s*(?:짜리\s*)?(?:리스트|list|배치|batch|입력|문장쌍|쌍|텍스트)"),
    # "1건 요청", "32건 리스트 요청", "list of 32"
    re.compile(
        r"(?<![\d.])(\d+)\s*건\s*(?:짜리\s*)?(?:요청|리스트|list|입력)|\b(?:list|batch) of (\d+)\b", re.I
    ),
    re.compile(r"\[[^\]]*?\bx\s*(\d+)\s*\]"),  # ["<premise>" x 32]
    re.compile(r"\b(?:list|batch)\s*\(\s*(\d+)\s*\)", re.IGNORECASE),  # list(32)
    # [문장 32개]
    re.compile(r"\[\s*(?:문장|텍스트|texts?|inputs?|sentences?)\s*(\d+)\s*개?\s*\]", re.IGNORECASE),
)
# A request body defined once and named ("payload A: {...}", "single : {...}"), then measured by its name.
DEFINITION = re.compile(
    # ... a note in parentheses after the name says what it is: "payload B (list of 32): {...}".
    r"^\s*(?:payload\s*|request\s*(?:format|body)?\s*|요청\s*(?:형식|바디)?\s*)?(?P<label>[A-Za-z][\w-]{0,15})\s*"
    r"(?P<note>\([^)]{0,40}\))?\s*:\s*(?P<body>\{.*)$",
    re.IGNORECASE,
)
# A row that sums N single calls ("single x32 (sum)"): its latency over N is one call's.
SUM = re.compile(r"\bx\s*(\d+)\s*\(sum\)|\bsum of (\d+)\b", re.IGNORECASE)
SINGLE = re.compile(
    r"\"inputs\"\s*:\s*\"|\b(?:one|a single|single) (?:premise|text|input|pair|sentence|request body|call|request)\b"
    r"|^\s*single\b(?=\s*[:=]?\s*\d)|단건",  # "single 16 ms × 32": a single call's time, leading the row
    re.IGNORECASE,
)
BATCH_PARAM = re.compile(r"\bbatch_size\b")


# A length said in tokens; a Korean particle may follow: "59토큰으로".
LENGTH_SAID = re.compile(r"(\d+)\s*-?\s*(?:tok(?:en)?s?\b|토큰)", re.IGNORECASE)
TOKENS = (
    LENGTH_SAID,
    # A length after its word, never a latency ("max 33,407 ms" is the slowest call, not a padding).
    re.compile(
        r"\b(?:pad(?:ded|ding)?|fixed|고정|패딩|max(?:_length)?|seq(?:_?len(?:gth)?)?)\s*(?:to\s+|[=:-]\s*)?(\d{2,4})\b"
        r"(?![,.]\d|\s*(?:ms|s|sec)\b)",
        re.I,
    ),
    re.compile(r"\b(\d{2,4})\s*(?:(?:으)?로\s*)?(?:padding|padded|pad|fixed|고정|패딩)"),
    re.compile(
        r"\btruncat\w*\s*(?:to|at)\s*(\d{2,4})\b(?!\s*(?:ms|s|sec)\b)", re.IGNORECASE
    ),  # "truncation to 512"
    re.compile(r"\b(?:token|토큰)\s*(?:length|len|길이|수)\s*[:=]?\s*(\d{1,4})\b", re.IGNORECASE),
)
PADDED = re.compile(r"\bpad(?:ded|ding)?\b|\bfixed\b|고정|패딩", re.IGNORECASE)
# Words that tell a row ran the samples' own lengths, not a padded length.
NATURAL = re.compile(
    # ... a length given as the set's median ("median 59 tokens"), not a median latency.
    r"\bnatural\b|\bsamples?\b|\bavg\b|\baverage\b|\bmean\b|\bmedian\s+\d{1,4}\s*-?\s*tok|평균|실제|샘플|~\s*\d",
    re.IGNORECASE,
)
FIXED = re.compile(
    r"\bpad|\bfixed\b|\bmax(?:_length|_len)?\s*[:=]?\s*\d{2,4}\b(?![,.]\d|\s*(?:ms|s|sec)\b)|고정|패딩", re.I
)
# Real traffic's figures, set against the benchmark's: "Production, week 1:", "실제 운영:".
PRODUCTION = re.compile(r"\bprod(?:uction)?\b|\blive traffic\b|\breal traffic\b|운영|실서비스", re.IGNORECASE)


def first_number(patterns: tuple[re.Pattern[str], ...], text: str) -> int | None:
    """The number the first of ``patterns`` to match the text captures."""
    for pattern in patterns:
        if found := pattern.search(text):
            return int(next(g for g in found.groups() if g))
    return None
