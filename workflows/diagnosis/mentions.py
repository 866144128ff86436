"""How the evidence holds a mention: the reading of one match in one item, and whether the evidence
asserts a marker anywhere. Facts and the matcher read mentions the same way."""

from __future__ import annotations

import re

from workflows.diagnosis.evidence import Evidence, EvidenceItem
from workflows.diagnosis.polarity import Reading, heading_context, polarity

# A check's record of a failure it did not find: the failure's name as a field set false, zero or none
# ('"ResourceLimitExceeded":false'), or as the check's name with a passing result ('"check":"AccessDenied",
# "result":"PASS"'). Software wrote it, and it says the failure is absent.
_FIELD_ABSENT = re.compile(r"^[\"']?\s*[:=]\s*(?:false|0|null|none|\[\]|\{\})\b", re.IGNORECASE)
_CHECK_PASSED = re.compile(
    r"^[\"']?\s*,\s*[\"']?(?:result|status|outcome)[\"']?\s*[:=]\s*[\"']?(?:pass(?:ed)?|ok|success|clear)\b",
    re.IGNORECASE,
)

# A table's header row: four or more cells, each a name and none a figure ('day,invocations,5xx,log_count("Worker
# died")'). A failure's name there names a column; the rows' figures, not the name, say whether it happened.
_CELL = r"(?=[\w@.\"-]*[A-Za-z_])[\w@\"][\w@.\"-]*(?:\([^()]{0,40}\))?"
_HEADER_ROW = re.compile(rf"^\s*{_CELL}(?:\s*,\s*{_CELL}){{3,}}\s*$")


def reading_of(item: EvidenceItem, match: re.Match[str]) -> Reading:
    """How ``item`` holds the mention ``match`` found in it: a person's line by its own words, its date and
    its heading; software's line only by the heading it was pasted under (someone else's, or the past). A
    check's record that names the failure as absent denies it, whoever wrote the line."""
    after = item.text[match.end() : match.end() + 80]
    if absent := _FIELD_ABSENT.match(after) or _CHECK_PASSED.match(after):
        return Reading("negated", absent.group().strip(" \"':=,"))
    if _HEADER_ROW.match(item.text):
        return Reading("hypothetical", "a column's name")
    if item.prose:
        return polarity(item.text, match.start(), match.end(), section=item.section, recalled=item.recalled)
    return heading_context(item.section)


def asserted(marker: re.Pattern[str], evidence: Evidence) -> bool:
    """The evidence asserts the marker: software wrote it, or a person's prose affirms it. A context named
    in a question, a denial or the past ("Are you using the TensorRT-LLM backend?" "No") is no context.
    Each line is read in its own sentence: a block's joined text (``whole``) holds the same lines again."""
    return any(
        reading_of(item, match).polarity == "affirmed"
        for item in evidence.items
        if not (item.prose and item.whole)
        for match in marker.finditer(item.text)
    )


def spoken_of(marker: re.Pattern[str], evidence: Evidence, *, persons_only: bool = False) -> bool:
    """The evidence names the marker in any way but a denial: asked, recalled, or offered as one of two ("the
    serverless template or the c6i one"). ``persons_only`` reads only a person's lines."""
    return any(
        reading_of(item, match).polarity != "negated"
        for item in evidence.items
        if not item.whole and (item.prose or not persons_only)
        for match in marker.finditer(item.text)
    )
