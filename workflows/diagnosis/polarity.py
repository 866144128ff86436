"""Whether a mention in human prose asserts what it names: NegEx and ConText, for pasted tickets.

Engineers list what they ruled out before they ask ("no ResourceLimitExceeded", "OOM 아님"), ask
("quota?", "혹시 803?"), recall ("we hit the limit last month") and report someone else's failure
("another team saw Worker died": ConText's experiencer). Such a mention is no evidence
for an entry, and a negated one is evidence against it. The scope rules follow NegEx (Chapman et
al. 2001, negex_triggers) and ConText (Harkema et al. 2009, pyConText's lexical kit): a trigger
reaches the words after it (pre-trigger) or before it (post-trigger), up to WINDOW words, the end
of the sentence or a terminator ("but", "however", ...), whichever comes first; a pseudo-trigger
("not only", "no change") is no trigger at all. The English triggers are the algorithms' own, less
those that only mean something at a bedside ("denies", "r/o"). Korean puts negation, question and
condition after their object ("쿼터 문제는 아님", "로그 그룹이 없음", "~인가요?", "803이면"), so
its triggers reach backwards, bounded by the clause (a comma, "~는데", "~지만").

Polarity is a property of prose only. A line that software wrote (a timestamp, a log level, a JSON
field, a traceback frame, an exception's name) *is* the failure even when it holds "no" or "not"
("No module named 'onnxruntime'", "no space left on device"): ``machine_lines.is_machine_line`` tells them apart.
Inside prose, a quoted text is machine output too, so a trigger within quotes (or within the
signature's own words) never counts; a trigger outside still scopes over the quote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from workflows.diagnosis import english as en
from workflows.diagnosis import korean as ko
from workflows.diagnosis.scope_windows import (
    Token,
    backward,
    clause,
    conditions,
    denied_from,
    forward,
    hedged_clause,
)

Polarity = Literal["affirmed", "negated", "hypothetical", "historical", "other"]

# A word holds a letter or a digit: a list's separator ("A / B", "A - B") takes no place in a window.
_WORD = re.compile(r"[^\s,;:()\[\]{}]*[^\W_][^\s,;:()\[\]{}]*")
# A code fence ends a sentence too: prose does not run on into the block, nor out of it.
# A dash that introduces a quote ('vllm-project/vllm 이슈 - "Model architectures ..."') is an apposition, not an end.
# A question's aside in brackets after its mark belongs to it: "will we hit the 803 thing? (unsupported display ...)".
_ASIDE_TO_END = r"\s*\([^()\n]*\)\s*$"
_SENTENCE_END = re.compile(rf"[.!。]+(?=\s|$)|\?+(?=\s|$)(?!{_ASIDE_TO_END})|[;]|\s[-–—]\s(?![\"“`])|```")
# ... so a sentence asks where it ends in its mark, or in the aside after it.
_ASKS = re.compile(rf"\?(?:{_ASIDE_TO_END}|\s*$)")
# Quoted text inside prose: double quotes, code spans, typographic quotes; single quotes only as a
# pair around words (so "it's" and "don't" are no quotes).
_QUOTED = re.compile(r"\"[^\"]{1,400}\"|`[^`]{1,400}`|“[^”]{1,400}”|(?<![\w'])'[^']{1,400}'(?![\w])")


# A polar question ("quota?", "is it OOM?") asks; a wh-question ("why do we get X?") presupposes X.
# The wh-word leads in English, after a chat's speaker if any ("dan: why do we ..."); "why" and
# Korean's 왜 presuppose wherever they stand ("pack 단계가 왜 이렇게 느리지?").
_WH = re.compile(
    r"^\W*(?:[\w.-]{1,30}:\s*)?(?:why|how|what|where|when|which|who|왜|어떻게|무엇|뭐|어디|언제)\b"
    r"|(?<!\w)(?:why|how come|왜|어째서)(?!\w)",
    re.IGNORECASE,
)


_PRE: tuple[tuple[str, Polarity], ...] = (
    (en.NEGATION_PRE, "negated"),
    (en.HYPOTHETICAL_PRE, "hypothetical"),
    (ko.HYPOTHETICAL_PRE, "hypothetical"),
    (en.OTHER, "other"),
)
_POST: tuple[tuple[str, Polarity], ...] = (
    (en.NEGATION_POST, "negated"),
    (ko.NEGATION_POST, "negated"),
    (en.HYPOTHETICAL_POST, "hypothetical"),
    (ko.QUESTION_POST, "hypothetical"),
    (ko.UNCERTAIN_POST, "hypothetical"),
    (en.HISTORICAL_POST, "historical"),
    (en.OTHER, "other"),
)
_ORDER: tuple[Polarity, ...] = ("negated", "hypothetical", "historical", "other")


def _phrase(alternatives: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w'-])(?:{alternatives})(?![\w'-])", re.IGNORECASE)


_PSEUDO_RE = _phrase(en.PSEUDO)
# HTTP's reason phrase as servers write it (RFC 9110), in a status line or a body ({"detail":"Not Found"}).
_REASON_PHRASE = re.compile(r"(?<![\w'-])Not Found(?![\w'-])")
_TERMINATOR_RE = _phrase(en.TERMINATOR)
_PRE_RE = [(_phrase(words), kind) for words, kind in _PRE]
_POST_RE = [(_phrase(words), kind) for words, kind in _POST]
# A Korean time word takes its particle glued ("작년에", "지난달엔", "어제까지"): the word ends at the particle.
_KO_PARTICLE = r"(?:에는|에도|에|엔|의|까지|부터|쯤|만|도)?"
_BOTH_RE: list[tuple[re.Pattern[str], Polarity]] = [
    (_phrase(en.HISTORICAL), "historical"),
    (_phrase(rf"(?:{ko.HISTORICAL}){_KO_PARTICLE}"), "historical"),
]
_OTHER_RE = _phrase(en.OTHER)
_GUIDANCE_RE = _phrase(en.GUIDANCE)
# Korean markers are glued to the word before them ("없음." "아님,"): no word boundary on the left.
_KO_DENIAL_RE = re.compile(rf"(?:{ko.NEGATION_POST})(?![\w])")
_HEARSAY_RE = re.compile(ko.HEARSAY_POST)
_KNOWN_RE = re.compile(ko.KNOWN_POST)
_KO_POST_RE: list[tuple[re.Pattern[str], Polarity]] = [
    (_KO_DENIAL_RE, "negated"),
    (re.compile(rf"(?:{ko.QUESTION_POST})(?![\w])"), "hypothetical"),
    (re.compile(rf"(?:{ko.UNCERTAIN_POST})(?![\w])"), "hypothetical"),
    (re.compile(rf"(?:{ko.FEAR_POST})(?![\w])"), "hypothetical"),
    (re.compile(rf"(?:{ko.BELIEF_POST})(?![\w])"), "hypothetical"),
    (re.compile(rf"(?:{ko.POSSIBLE_POST})(?![\w])"), "hypothetical"),
    (re.compile(rf"(?:{ko.OCCURS_IF_POST})(?![\w])"), "hypothetical"),
    (re.compile(rf"(?:{ko.PURPOSE_POST})(?![\w])"), "hypothetical"),
    (_KNOWN_RE, "hypothetical"),
    # The retrospective -던 after a past stem ("났던 건", "실패했던 건"): what had happened before, recalled; after any
    # stem where it names the matter ("Worker died 나던 건", what used to occur).
    (
        re.compile(
            r"(?:었|았|했|났|됐|였|떴|왔|봤|혔|겼|렸|졌)던(?![\w])|(?<=[가-힣])던\s*(?:건|것|거)(?![가-힣])"
        ),
        "historical",
    ),
    # What has happened before, told as experience ("전부 neutral 로 나온 적 있어서"): the past, not this time.
    (re.compile(r"(?<!\S)적\s*(?:이\s*|도\s*)?있\w*"), "historical"),
    # What was resolved and is told as a matter closed ("... 는 쿼터 늘려서 해결된 건"): the past, not this time.
    (re.compile(r"해결(?:된|됐던|되었던)\s*(?:건|것|거|이슈|문제)(?![가-힣])"), "historical"),
    # The past perfect -었었 ("실패했었음", "났었는데"): a state that held before and no longer does.
    (re.compile(r"(?:었|았|했|났|됐|였)었\w*"), "historical"),
    # Hearsay, told by someone else ("같이 못 깐다길래", "803 난다던데", "OOM 이라고 들었음"): another's report.
    (_HEARSAY_RE, "other"),
]


@dataclass(frozen=True)
class Reading:
    """A mention's polarity and the trigger that set it (empty when affirmed)."""

    polarity: Polarity
    trigger: str = ""


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the sentence holding [start, end): punctuation ends one, never inside a quote; a quote
    whose own text ends a sentence ("에러: `ValueError: ... imported.` 혹시 ...?") ends it where it closes."""
    masked = _mask(text, [])
    ends = [boundary.end() for boundary in _SENTENCE_END.finditer(masked)]
    ends += [
        quoted.end()
        for quoted in _QUOTED.finditer(text)
        if re.search(r"[.!?。]\s*$", quoted.group()[1:-1])
        and text[quoted.end() : quoted.end() + 1] in ("", " ", "\n")
    ]
    left, right = 0, len(text)
    for boundary in sorted(ends):
        if boundary <= start:
            left = boundary
        elif boundary >= end:
            right = boundary
            break
    return left, right


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with quoted texts and ``spans`` blanked: no trigger is read inside them."""
    chars = list(text)
    for quoted in _QUOTED.finditer(text):
        chars[quoted.start() + 1 : quoted.end() - 1] = "x" * (quoted.end() - quoted.start() - 2)
    for first, last in spans:
        chars[first:last] = "x" * (last - first)
    return "".join(chars)


def _tokens(sentence: str) -> list[Token]:
    """The sentence's words; a quoted message is one phrase in a window, as a noun phrase is."""
    tokens: list[Token] = []
    quotes = [(q.start(), q.end()) for q in _QUOTED.finditer(sentence)]
    for m in _WORD.finditer(sentence):
        inside = next((q for q in quotes if q[0] <= m.start() < q[1]), None)
        if inside and tokens and inside[0] <= tokens[-1].start:
            tokens[-1] = Token(tokens[-1].start, m.end(), sentence[tokens[-1].start : m.end()])
            continue
        tokens.append(Token(m.start(), m.end(), m.group()))
    return tokens


def _scopes(sentence: str, masked: str) -> list[tuple[Polarity, int, int, str]]:
    """Each trigger's reach in one sentence: (polarity, first, last character, trigger)."""
    tokens = _tokens(sentence)
    # Pseudo-triggers are read in the text as written: "404 Not Found" is a status even where the mention
    # that ends in "404" is blanked.
    pseudo = [(m.start(), m.end()) for m in _PSEUDO_RE.finditer(sentence)]
    pseudo += [(m.start(), m.end()) for m in _REASON_PHRASE.finditer(sentence)]
    words = {i for i, t in enumerate(tokens) if _TERMINATOR_RE.fullmatch(masked[t.start : t.end])}
    words |= {i for i, t in enumerate(tokens) if ko.CONJUNCTION.fullmatch(t.text)}
    # ... a comma after a closing bracket or quote too: "(CUDA 13.x), InferenceAmiVersion 미지정".
    commas = {i for i, t in enumerate(tokens) if re.match(r"[)\]\"'’”]{0,2},", masked[t.end : t.end + 3])}
    commas |= {
        i for i, t in enumerate(tokens) if ko.CLAUSE_END.search(t.text) and not ko.SEARCHED.match(t.text)
    }
    scopes: list[tuple[Polarity, int, int, str]] = []

    def index_at(position: int) -> int:
        return next((i for i, token in enumerate(tokens) if token.end > position), len(tokens))

    def found(pattern: re.Pattern[str]) -> list[re.Match[str]]:
        return [m for m in pattern.finditer(masked) if not any(a <= m.start() < b for a, b in pseudo)]

    def add(kind: Polarity, first: int, last: int, trigger: str) -> None:
        if last > first:
            scopes.append((kind, tokens[first].start, tokens[last - 1].end, trigger))

    for pattern, kind in _PRE_RE:
        for match in found(pattern):
            first = index_at(match.end())
            add(kind, first, forward(tokens, first, words, commas), match.group())
    for pattern, kind in _POST_RE + _KO_POST_RE:
        for match in found(pattern):
            end = index_at(match.start())
            glued = end < len(tokens) and tokens[end].start < match.start()  # "OOM인가요", "실패했었음"
            # The word the trigger is glued to takes no place in the window.
            first = backward(end, words, commas)
            if kind == "hypothetical":
                first = hedged_clause(tokens, first, end, commas)
            end += glued
            add(kind, denied_from(tokens, first, end, match.group()), end, match.group())
    for pattern, kind in _BOTH_RE:
        for match in found(pattern):
            add(kind, *clause(index_at(match.start()), len(tokens), commas), match.group())
    for first, last, trigger in conditions(tokens, masked, words, commas):
        add("hypothetical", first, last, trigger)
    if _ASKS.search(sentence) and not _WH.search(sentence):
        add("hypothetical", 0, len(tokens), "?")
    return scopes


def polarity(text: str, start: int, end: int, *, section: str = "", recalled: str = "") -> Reading:
    """How the prose ``text`` holds its mention at [start, end).

    Args:
        text: one line (or a few) of human prose, normalised.
        start: where the mention starts.
        end: where it ends.
        section: the heading the line sits under (``outline``): a heading in the past or someone
            else's ("2. 지난달 이슈 후속", "Other teams:") sets its items' context, as a clinical
            note's "Past Medical History" does in medspaCy.
        recalled: why the line's own date puts it in the past (``dating.recalled``), or empty.

    Returns:
        ``negated`` (ruled out), ``hypothetical`` (asked, supposed), ``historical`` (in the past),
        ``other`` (someone else's: another team's, read about) or ``affirmed``, with the trigger that decided it.
    """
    for piece_start, piece_end in _pieces(text, start, end):
        reading = _reading(text, piece_start, piece_end, (start, end))
        if reading.polarity != "affirmed":
            return reading
    if recalled:
        return Reading("historical", recalled)
    return heading_context(section)


def heading_context(section: str) -> Reading:
    """What a heading says of everything under it, a person's line or a pasted log alike: the past
    ("Last month's incident:"), someone else's ("We saw this in another team's repo:"), or what to prevent
    or look for ("# Encoder deploy checklist", "## vLLM runbook"), else affirmed."""
    masked = _mask(section, [])
    for pattern, kind in (*_BOTH_RE, (_OTHER_RE, "other"), (_GUIDANCE_RE, "hypothetical")):
        if found := pattern.search(masked):
            return Reading(kind, found.group())
    return Reading("affirmed")


def _pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The mention cut at sentence ends: a match that runs across sentences ("X? ... Y") is a
    statement per sentence, each read in its own sentence: "quota? ... 'ml.g5.xlarge for endpoint
    usage'" asks in its first. Triggers inside the match stay masked (the signature's own words)."""
    masked = _mask(text, [])
    cuts = [b.end() for b in _SENTENCE_END.finditer(masked, start, end) if start < b.end() < end]
    bounds = [start, *cuts, end]
    return [(a, b) for a, b in zip(bounds, bounds[1:], strict=False) if text[a:b].strip()]


# A count of none right before what it counts: "0 Worker died", "zero 5xx", "0x OOM" (NegEx reads "no X").
_ZERO_BEFORE = re.compile(r"(?<![\w.,/-])(?:0|zero)\s*(?:x\s*)?[\"'`‘“]?\s*\Z", re.IGNORECASE)
# A count of none in the next and last cell of its row: '"error 803","0"', "| Worker died | 0 |", "Worker died: 0".
_ZERO_AFTER = re.compile(
    r"[\"'`’”]?\s*[,|:=\t]\s*[\"']?(?:0|zero|none)[\"']?\s*\|?\s*$"
    # ... or a bare count of none after it, in a list of counts: "재시작 0, Worker died 0, 4xx ..."
    r"|[\"'`’”]?\s+(?:0|zero)\s*(?:건|회|개|times|hits)?(?=\s*[,;)]|\.(?!\d)|[ \t]*(?:\n|$))",
    re.IGNORECASE,
)


def _listed_before_denial(after: str) -> str:
    """The Korean denial a list ends with, where the mention is the list's first item: "Worker died, 5xx
    없음" denies both, as "no fever, chills or cough" does in NegEx. A mention with its own predicate
    before the comma ("Worker died 발생, 5xx 없음") is a clause of its own, and is not denied."""
    if not re.match(r"\s*[\"'`”’]?\s*[,/·]", after):
        return ""
    found = _KO_DENIAL_RE.search(after)
    if found is None:
        return ""
    items = re.split(r"[,/·]", after[: found.start()])[1:]
    words = [word for item in items for word in item.split()]
    short = 1 <= len(items) <= 3 and all(0 < len(item.split()) <= 3 for item in items)
    if short and not any(ko.CLAUSE_END.search(w) or ko.CONJUNCTION.fullmatch(w) for w in words):
        return found.group()
    return ""


# Two things offered as alternatives: "either the djl-lmi based one or the onnxruntime+TensorRT one".
_EITHER = re.compile(r"\beither\b(?!\s*(?:way|case)\b)", re.IGNORECASE)
_OR = re.compile(r"\bor\b", re.IGNORECASE)
# ... or a reply that offers another ("priya 11:06  or TRT building an engine ...", "아니면 803?"), after its speaker.
_LEADING_OR = re.compile(
    r"^\W*(?:[\w.-]{1,30}(?::|\s+\d{1,2}:\d\d)\s*)?(?:or|또는|아니면|혹은)(?![\w'-])", re.IGNORECASE
)


def _in_quoted_question(sentence: str, at: int) -> bool:
    """The mention sits in a quoted question ("are we close to ResourceLimitExceeded?"): someone's question
    quoted whole, asked, not asserted. A quoted message is masked for triggers; its own question mark is not."""
    return any(
        quoted.start() < at < quoted.end() and quoted.group()[1:-1].rstrip().endswith("?")
        for quoted in _QUOTED.finditer(sentence)
    )


def _reading(text: str, start: int, end: int, mention: tuple[int, int]) -> Reading:
    """The reading of [start, end), one sentence's part of the ``mention``."""
    left, right = _sentence(text, start, end)
    sentence = text[left:right]
    # Quotes are found in the whole text: a code fence's quote ("```...```") may open before the sentence does.
    masked = _mask(text, [(max(mention[0], left), min(mention[1], right))])[left:right]
    if zero := _ZERO_BEFORE.search(text, left, start) or _ZERO_AFTER.match(text, end):
        return Reading("negated", zero.group().strip())
    if listed := _listed_before_denial(text[end:right]):
        return Reading("negated", listed)
    if _in_quoted_question(sentence, start - left):
        return Reading("hypothetical", "a quoted question")
    if (either := _EITHER.search(masked[: start - left])) and _OR.search(masked, either.end()):
        return Reading("hypothetical", "one of two it may be (either ... or)")
    if alternative := _LEADING_OR.match(masked):
        return Reading("hypothetical", alternative.group().strip())
    hits = [
        (kind, trigger)
        for kind, first, last, trigger in _scopes(sentence, masked)
        if first < end - left and start - left < last
    ]
    for kind in _ORDER:
        for found, trigger in hits:
            if found == kind:
                return Reading(kind, trigger)
    # A match that spans a person's own words between its signature's (".{0,120}?"): a time word there, never a
    # signature's, dates what it matched ("... 4.61s 예전에 gzip -9 로 63초").
    inside = _mask(text[start:end], [])
    for pattern, kind in (*_BOTH_RE, (_HEARSAY_RE, "other"), (_KNOWN_RE, "hypothetical")):
        if found_word := pattern.search(inside):
            return Reading(kind, found_word.group())
    return Reading("affirmed")
