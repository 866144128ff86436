"""Words that OCR misread, put back where the paste says it was read from a screenshot.

A console page or a log read through OCR prints "lnvalid input narne" for "Invalid input name": a capital I read
as an l, an m as rn, an O as a 0. The signatures are exact words, so such a paste matches none. Where the paste
says it came through OCR (it says "OCR" or "screenshot", or its console labels were read as OCR's), a word that
is not one the rules know, but becomes one by undoing one or two of OCR's usual confusions, is read as that word.
Only whole words are replaced, and only into the rules' own vocabulary: a word OCR did not touch stays as it is. A word
OCR split at a space is joined where the join is such a word, and a number's letters ("8O3") are read as digits.
"""

from __future__ import annotations

import re
from functools import lru_cache

from workflows.diagnosis.rules import default_rules

# The paste says it was read from an image: "(screenshot → OCR)", "스크린샷", "캡처 OCR".
_SIGNALLED = re.compile(r"\bOCR\b|\bscreenshots?\b|스크린샷|캡처|캡쳐", re.IGNORECASE)
# OCR's usual confusions, each read both ways: what it printed and what the page showed.
_CONFUSIONS = (
    ("l", "I"),
    ("1", "l"),
    ("1", "I"),
    ("1", "i"),  # "p1ng", "endpo1nt"
    ("l", "i"),  # "contalner", "prlmary"
    ("rn", "m"),
    ("0", "O"),
    ("0", "o"),
    ("vv", "w"),
    ("cl", "d"),
    ("tl", "ti"),
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]{3,}")
_LITERAL = re.compile(r"(?<!\\)[A-Za-z][A-Za-z_]{3,}")


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """The words the packaged rules' signatures spell out (four letters or more)."""
    words: set[str] = set()
    for rule in default_rules().rules:
        for condition in (*rule.signatures, *rule.requires, *rule.unless, *rule.doubts):
            if condition.pattern:
                words.update(_LITERAL.findall(condition.pattern))
    return frozenset(words)


def signalled(text: str) -> bool:
    """The paste says it was read through OCR (near its start; a page read from an image is never a long log)."""
    return len(text) < 1_000_000 and bool(_SIGNALLED.search(text[:4000]))


def _undone(word: str, depth: int = 2) -> str | None:
    """``word`` with up to ``depth`` of OCR's confusions undone, where that spells a word of the vocabulary."""
    known = vocabulary()
    if word in known:
        return word
    if depth == 0:
        return None
    for printed, shown in _CONFUSIONS:
        for a, b in ((printed, shown), (shown, printed)):
            start = word.find(a)
            while start >= 0:
                fixed = _undone(word[:start] + b + word[start + len(a) :], depth - 1)
                if fixed:
                    return fixed
                start = word.find(a, start + 1)
    return None


def corrected(text: str) -> tuple[str, list[str]]:
    """``text`` with OCR's misread words put back, and each change as "printed→read"."""
    known = vocabulary()
    changes: dict[str, str] = {}

    def fix(match: re.Match[str]) -> str:
        word = match.group()
        if word in known or len(word) > 40:
            return word
        if word not in changes:
            changes[word] = _undone(word) or word
        return changes[word]

    fixed = _WORD.sub(fix, _joined(_DIGITS.sub(_digits, text), known, changes))
    return fixed, [f"{a}→{b}" for a, b in changes.items() if a != b]


# A number with letters OCR read for its digits: "error 8O3", "1O2" (two digits or more, so words stay words).
_DIGITS = re.compile(r"(?<![A-Za-z0-9])(?=[0-9OolI]*\d[0-9OolI]*\d)[0-9OolI]{2,}(?![A-Za-z0-9])")
_AS_DIGITS = str.maketrans("OolI", "0011")


def _digits(match: re.Match[str]) -> str:
    return match.group().translate(_AS_DIGITS)


# Two fragments of one word that OCR split at a space: "disp lay driver", "fai led", "Mode l".
_SPLIT = re.compile(r"(?<![A-Za-z])([A-Za-z]{2,}) ([A-Za-z]+)(?![A-Za-z])")


def _joined(text: str, known: frozenset[str], changes: dict[str, str]) -> str:
    """``text`` with each pair of fragments joined where the join is a word of the vocabulary (five letters or more)
    and the fragments are not both words of it."""
    out: list[str] = []
    position = 0
    while found := _SPLIT.search(text, position):
        first, second = found.groups()
        whole = first + second
        if len(whole) >= 5 and whole in known and not (first in known and second in known):
            out.append(text[position : found.start()] + whole)
            changes[f"{first} {second}"] = whole
            position = found.end()
        else:
            out.append(text[position : found.start(2)])
            position = found.start(2)
    return "".join(out) + text[position:]
