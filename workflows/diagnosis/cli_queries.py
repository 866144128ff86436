"""The AWS CLI's ``--query`` renames the fields it prints: ``--query '{s:EndpointStatus,r:FailureReason}'`` prints
``{"s": "Failed", "r": ""}`` (a JMESPath multiselect hash). Put the fields' own names back, so that the record
reads as the Describe* output it is."""

from __future__ import annotations

import re

# The multiselect hash of a --query, quoted either way: '{S:EndpointStatus,PV:ProductionVariants}'.
_QUERY = re.compile(r"--query\s+(['\"])\{(?P<body>[^{}'\"]*)\}\1")
_PAIR = re.compile(
    r"\s*(?P<alias>[A-Za-z_]\w*)\s*:\s*(?P<path>[A-Za-z_][\w.]*(?:\[\d*\])?(?:\.[A-Za-z_]\w*)*)\s*"
)


def aliases(text: str) -> dict[str, str]:
    """Each alias a --query of the text gives, with the field it stands for (a path's last name)."""
    found: dict[str, str] = {}
    for query in _QUERY.finditer(text):
        for part in query["body"].split(","):
            pair = _PAIR.fullmatch(part)
            field = re.findall(r"[A-Za-z_]\w*", pair["path"])[-1] if pair else ""
            if pair and field != pair["alias"]:
                found[pair["alias"]] = field
    return found


def with_field_names(text: str) -> str:
    """The text with each alias a --query gave written as its field's name, as a JSON key ('"s": ') or a YAML key at
    a line's start ('s: '); the text as it was where no --query renames anything."""
    renamed = aliases(text)
    if not renamed:
        return text
    names = "|".join(re.escape(alias) for alias in sorted(renamed, key=len, reverse=True))
    text = re.sub(rf'"({names})"(\s*:)', lambda m: f'"{renamed[m[1]]}"{m[2]}', text)
    return re.sub(rf"(?m)^(\s*)({names})(:\s)", lambda m: f"{m[1]}{renamed[m[2]]}{m[3]}", text)
