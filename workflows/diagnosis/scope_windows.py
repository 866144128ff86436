"""How far a trigger reaches, in a sentence's words (``polarity`` finds the triggers and reads the reach).

NegEx's window runs WINDOW words after a pre-trigger or before a post-trigger, to a clause's comma or a terminator; a
time word reaches its own clause; a guess with no words of its own ("..., that's it probably") reaches the clause
before it; a Korean copula's denial reaches its complement and an existential's starts after a time or place set
before it; a Korean condition supposes what follows it, and a negative condition the clause it closes too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workflows.diagnosis import korean as ko

# NegEx's scope: five words in the original; one more for ops prose's code spans ("'Worker died' lines").
WINDOW = 6


@dataclass(frozen=True)
class Token:
    """One word of a sentence: where it starts and ends, and its text."""

    start: int
    end: int
    text: str


def forward(tokens: list[Token], begin: int, words: set[int], commas: set[int]) -> int:
    """Where a scope opened at ``begin`` ends (exclusive): WINDOW words, a terminator, a clause's comma."""
    last = begin
    while last < len(tokens) and last - begin < WINDOW and last not in words:
        last += 1
        if last - 1 in commas:
            break
    return last


def backward(end: int, words: set[int], commas: set[int]) -> int:
    """Where a scope closed at ``end`` (exclusive) starts, reaching back as ``forward`` reaches on."""
    first = end
    while first > 0 and end - first < WINDOW and first - 1 not in words and first - 1 not in commas:
        first -= 1
    return first


# A clause with nothing of its own before a hedge: "..., that's it probably", "..., could be that".
_EMPTY_WORD = re.compile(
    r"(?:that|that's|thats|it|it's|its|this|i|think|guess|so|yeah|which|is|was)", re.IGNORECASE
)


def hedged_clause(tokens: list[Token], first: int, end: int, commas: set[int]) -> int:
    """Where a guess put after what it guesses reaches back to: past its own comma, to the clause before, where the
    guess's clause holds nothing but the guess ("LMI loads on first request, that's it probably")."""
    if first > 0 and first - 1 in commas and all(_EMPTY_WORD.fullmatch(t.text) for t in tokens[first:end]):
        return max((c + 1 for c in commas if c < first - 1), default=0)
    return first


def clause(index: int, count: int, commas: set[int]) -> tuple[int, int]:
    """The clause around token ``index``, between the commas before and after it: a time word dates its own
    clause ("Priya set it up yesterday, I can't see the config" dates the setup, not what follows)."""
    first = max((c + 1 for c in commas if c < index), default=0)
    last = min((c + 1 for c in commas if c >= index), default=count)
    return first, last


def denied_from(tokens: list[Token], first: int, end: int, trigger: str) -> int:
    """Where a Korean denial's reach starts: a copula's at its complement ("A가 B가 아님"), an existential's after a
    time or place set before what it denies ("InService 시점엔 \"Loading model\" 없음"); others at ``first``."""
    if ko.COPULA_NEGATION.match(trigger):
        return complement(tokens, first, end)
    if ko.EXISTENTIAL_NEGATION.match(trigger):
        return max([first, *(i + 1 for i in range(first, end) if ko.SETTING.search(tokens[i].text))])
    return first


def complement(tokens: list[Token], first: int, end: int) -> int:
    """Where a Korean copula's denial starts: after the marked phrase that precedes its complement."""
    marked = [i for i in range(first, end) if ko.MARKED.search(tokens[i].text)]
    return marked[-2] + 1 if len(marked) > 1 else first


def conditions(
    tokens: list[Token], masked: str, words: set[int], commas: set[int]
) -> list[tuple[int, int, str]]:
    """Korean conditions' reach, in tokens: "803이면 ..." supposes the condition and what follows it, and a negative
    condition the clause it closes too ("batch_size 를 안 주면", if it is not given); a plain -면 may state what
    happened ("... 로 돌리면 25 ms")."""
    found: list[tuple[int, int, str]] = []
    for index, token in enumerate(tokens):
        if ko.CONDITION.search(masked[token.start : token.end]):
            found.append((index, forward(tokens, index, words, commas), token.text))
            before = tokens[index - 1].text if index else ""
            if before in ("안", "못") or re.match(r"(?:없|않)", token.text):
                found.append((backward(index, words, commas), index, token.text))
    return found
