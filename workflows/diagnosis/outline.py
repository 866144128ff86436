"""Which heading a line of a person's text sits under: the outline of a mail, a ticket, a report.

medspaCy's sectionizer reads a clinical note by its sections: an entity under "Past Medical History"
is historical, whatever its own sentence says. People write the same outlines: "2. Last month's
issues" and its items, "Other teams:" and its bullets, a Markdown heading and its paragraph. The
heading is the context of its items (``polarity`` reads it for the past and for someone else's),
so an item "- serverless OOM (Worker died): fixed with 6144 MB" under last month's issues recalls
a failure and does not report one.

A line's heading is the nearest line before it that it is nested under: a Markdown heading (up to
the next heading of the same or a higher level), or a line followed by deeper-indented lines or by
bullets. A blank line ends an outline, except after a label that ends with a colon. A fenced code
block (```) or a quote ("> ...") sits under the label that introduces it ("We saw this in another team's
repo:"): what it holds was pasted as that label says, someone else's error or last month's log.
"""

from __future__ import annotations

import re

from workflows.diagnosis.english import GUIDANCE

_MARKDOWN_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+\S")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_QUOTE = re.compile(r"^\s*>\s?\S")
# ... or a line in quotation marks after the words that introduce it ("users report" / "그쪽에서 이렇게 씀:").
_QUOTED_LINE = re.compile(r"^\s*[\"“]")
_INTRODUCES = re.compile(
    r"(?::|\b(?:report|reports|reported|say|says|said|wrote|writes|posted|mentions?|mentioned))\s*$", re.I
)
# A list's item: a bullet, a number, a letter, or a checklist's box ("[x] ...", "[ ] ...").
_GUIDANCE_TITLE = re.compile(rf"(?<![\w'-])(?:{GUIDANCE})(?![\w'-])", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•·▪◦]|\d{1,2}[.)]|[a-z][.)]|\[[ xXvV✓✔]\])\s+\S")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def headings(lines: list[str]) -> list[str]:
    """For each line, the heading it sits under ("" when none); a heading is not under itself.

    Args:
        lines: the text's lines, as pasted.

    Returns:
        One heading text per line, in the lines' order.
    """
    parents: list[str] = [""] * len(lines)
    markdown: list[tuple[int, str]] = []  # the Markdown headings in force: (level, text)
    outline: list[tuple[int, bool, str]] = []  # open outline parents: (indent, is_bullet, text)
    fence: str | None = None  # inside a fenced block: the heading its lines sit under
    last = ""  # the last non-blank line outside a fence
    quoted = ""  # inside a quote a label introduced: the heading its lines sit under
    for index, line in enumerate(lines):
        # A "> " quote sits under the line right before it, whatever that line ends with ("옆 팀 채널에서 본 건데 참고하세요").
        introduced = bool(_QUOTE.match(line) and index and lines[index - 1].strip() and last)
        quoting = _QUOTE.match(line) or (_QUOTED_LINE.match(line) and _INTRODUCES.search(last))
        if (
            fence is None
            and quoting
            and (quoted or last.endswith(":") or _INTRODUCES.search(last) or introduced)
        ):
            # ... under what that line sits under too, where it is an outline's item ("1. 지난달 이슈 / - ... 막혔던 건은").
            chain = [text for _, _, text in outline] if outline and outline[-1][2] == last else [last]
            quoted = quoted or " / ".join([text for _, text in markdown] + chain)
            parents[index] = quoted
            continue
        quoted = ""
        if fence is None and _FENCE.match(line):
            label = [last] if last.endswith(":") else []
            fence = " / ".join([text for _, text in markdown] + label)
            parents[index] = fence
            if line.strip()[3:].rstrip().endswith(("```", "~~~")):
                fence = None  # a block on one line: ```ValueError: ...```
            continue
        if fence is not None:
            parents[index] = fence
            if line.rstrip().endswith(("```", "~~~")):
                fence = None
            continue
        if not line.strip():
            if outline and not outline[-1][2].endswith(":"):
                outline = []  # a paragraph ends; a label ("Last month:") still leads the list after it
            continue
        heading = _MARKDOWN_HEADING.match(line)
        if heading and not _comment(line, lines[index + 1] if index + 1 < len(lines) else ""):
            level = len(heading.group(1))
            while markdown and markdown[-1][0] >= level:
                markdown.pop()
            markdown.append((level, line.strip()))
            outline = []
            continue
        indent, bullet = _indent(line), bool(_BULLET.match(line))
        while outline and not _nested(outline[-1], indent, bullet):
            outline.pop()
        parents[index] = " / ".join([text for _, text in markdown] + [text for _, _, text in outline])
        outline.append((indent, bullet, line.strip()))
        last = line.strip()
    return _titled(lines, parents)


# A shell's or a config's comment that runs on: it ends mid-sentence, or the next comment line carries it on.
_RUNS_ON = re.compile(r"(?:,|\b(?:and|or|but)|\()\s*$", re.IGNORECASE)
_CARRIED_ON = re.compile(r"^\s*#\s+[a-z(]")


def _comment(line: str, after: str) -> bool:
    """A "#" line that is a comment's sentence, not a Markdown heading: it runs on, the next line carries it on, or
    it opens in lower case as a sentence's middle does ("# the region has had capacity all week")."""
    return bool(_RUNS_ON.search(line) or _CARRIED_ON.match(after) or _CARRIED_ON.match(line))


def _titled(lines: list[str], parents: list[str]) -> list[str]:
    """A text titled as guidance ("[테스트 계획] ...", "Test plan: ...", "Deploy checklist") frames every line after
    its title, beside the heading the line sits under: what it names is to be prevented or checked."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or not _GUIDANCE_TITLE.search(lines[first]):
        return parents
    title = lines[first].strip()
    return [
        f"{title} / {parent}" if parent else title if i != first else "" for i, parent in enumerate(parents)
    ]


def _nested(parent: tuple[int, bool, str], indent: int, bullet: bool) -> bool:
    """A line is under ``parent`` when it is indented deeper, or is a bullet under a plain line."""
    parent_indent, parent_bullet, _ = parent
    return indent > parent_indent or (bullet and not parent_bullet and indent >= parent_indent)
