"""How the evidence holds a mention: the reading of one match in one item, and whether the evidence
asserts a marker anywhere. Facts and the matcher read mentions the same way."""

from __future__ import annotations

import re

from workflows.diagnosis.evidence import Evidence, EvidenceItem
from workflows.diagnosis.polarity import Reading, heading_context, polarity


def reading_of(item: EvidenceItem, match: re.Match[str]) -> Reading:
    """How ``item`` holds the mention ``match`` found in it: a person's line by its own words, its date and
    its heading; software's line only by the heading it was pasted under (someone else's, or the past)."""
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
