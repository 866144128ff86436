"""When a person's line says a thing happened: ConText's temporality by date.

ConText (Harkema et al., 2009) reads a condition as historical when the note dates it more than 14 days
before the encounter. A pasted ticket has no encounter, but it has its own latest date: the comment that
closes it, today's run, a log's last timestamp. A line a person wrote that states a date more than
HISTORICAL_DAYS before that latest date recalls what happened then ("- 10/28: CreateEndpoint failed with
ResourceLimitExceeded", "On 05/Nov we hit ..."): it is no evidence of the failure now, as "last month" is
not (``polarity``). Lines software wrote are never recalled: a log line's timestamp only dates the paste.

A date is read in the forms tickets and consoles write: ISO (2026-10-28, 2026/10/28), Jira's 05/Nov/26,
"5 Nov", "Nov 5, 2026", Korean 11월 3일, and month/day (10/28) only where it leads a line, as a
timeline's item does: elsewhere "1/4" is a count of copies, not a date.
"""

from __future__ import annotations

import re
from datetime import date, datetime

HISTORICAL_DAYS = 14
_MONTHS = {
    m: i
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1
    )
}
_MON = r"(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_YEAR = r"(?P<year>(?:19|20)?\d\d)"
_FORMS = (
    re.compile(r"(?<![\d.])(?P<year>20\d\d)[-/.](?P<month>\d{1,2})[-/.](?P<day>\d{1,2})(?!\d)"),
    re.compile(rf"(?<!\d)(?P<day>\d{{1,2}})[/ -]{_MON}(?:[/ -,]+{_YEAR})?(?![\w])", re.IGNORECASE),
    re.compile(
        rf"(?<![\w]){_MON} (?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:,? (?P<year>20\d\d))?(?!\d)", re.IGNORECASE
    ),
    re.compile(r"(?:(?P<year>20\d\d)\s*년\s*)?(?P<month>\d{1,2})\s*월\s*(?P<day>\d{1,2})\s*일"),
    re.compile(r"(?<![\d/])(?P<month>\d{1,2})/(?P<day>\d{1,2})/(?P<year>20\d\d)(?!\d)"),
)
# Month/day with no year, only as a line's lead: "- 10/28: ...", "12/01 배포 ...", "(11/03) 승인", or as the
# date a status is taken on: "현재 상태 (12/05 기준)", "as of 12/05".
_LEADING = re.compile(
    r"^\s*(?:[-*•>]\s*)?\(?(?:on\s+)?(?P<month>\d{1,2})/(?P<day>\d{1,2})(?![\d/])\)?[:\s]", re.I
)
_AS_OF = (
    re.compile(r"\bas of (?P<month>\d{1,2})/(?P<day>\d{1,2})(?![\d/])", re.IGNORECASE),
    re.compile(r"(?<![\d/])(?P<month>\d{1,2})/(?P<day>\d{1,2})(?=\s*기준)"),
)


def _date(match: re.Match[str], year: int) -> date | None:
    fields = match.groupdict()
    month = _MONTHS[fields["mon"][:3].lower()] if fields.get("mon") else int(fields["month"])
    stated = fields.get("year")
    full = (2000 + int(stated) if len(stated) == 2 else int(stated)) if stated else year
    try:
        return date(full, month, int(fields["day"]))
    except ValueError:
        return None


def stated_date(line: str, year: int) -> tuple[date, str] | None:
    """The first date ``line`` states, with its text; a date without a year takes ``year``."""
    found = [m for form in _FORMS if (m := form.search(line))]
    if leading := _LEADING.match(line):
        found.append(leading)
    found += [m for form in _AS_OF if (m := form.search(line))]
    for match in sorted(found, key=lambda m: m.start("day")):
        if (when := _date(match, year)) is not None:
            return when, match.group().strip(" -*•>():")
    return None


def latest_date(lines: list[str], now: datetime | None) -> tuple[date, str] | None:
    """The paste's latest date: of any line, a person's or software's; the year defaults to the latest
    year a line states, else ``now``'s."""
    # A year a date states ("2026-11-26", "Dec 4, 2026", "2026년"), not any number that looks like one
    # (MemorySizeInMB=2048).
    years = [
        int(stated) + (2000 if len(stated) == 2 else 0)
        for line in lines
        for form in _FORMS
        for m in form.finditer(line)
        if (stated := m.groupdict().get("year"))
    ]
    year = max(years) if years else (now or datetime.now()).year
    dated = [found for line in lines if (found := stated_date(line, year))]
    return max(dated, key=lambda pair: pair[0]) if dated else None


def recalled(line: str, reference: tuple[date, str]) -> str:
    """Why ``line`` recalls the past ("dated 10/28, 34 days before 12/01, ..."), or "" when it does not; a
    date without a year takes the reference's."""
    found = stated_date(line, reference[0].year)
    if found is None:
        return ""
    days = (reference[0] - found[0]).days
    if days <= HISTORICAL_DAYS:
        return ""
    return f"dated {found[1]}, {days} days before {reference[1]}, the paste's latest date"
