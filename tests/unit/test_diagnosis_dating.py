"""A person's line that dates itself weeks before the paste's latest date recalls the past (ConText's
temporality by date); counts, near dates and software's own lines are not recalled."""

from __future__ import annotations

from datetime import date

from workflows.diagnosis import diagnose
from workflows.diagnosis.dating import latest_date, recalled, stated_date
from workflows.diagnosis.paste import evidence_from_paste

QUOTA = (
    "CreateEndpoint failed: ResourceLimitExceeded ('ml.g5.2xlarge for endpoint usage' is 0 Instances, "
    "with current utilization of 0 Instances)"
)


def test_dates_are_read_in_the_forms_tickets_write_and_counts_are_not_dates() -> None:
    # Given lines with dates in several forms, and lines with counts written like month/day
    # When their dates are read (a year-less date takes the given year)
    # Then each form gives its date
    assert stated_date("- 10/28: deploy failed", 2026) == (date(2026, 10, 28), "10/28")
    assert stated_date("On 05/Nov we hit the limit", 2026) == (date(2026, 11, 5), "05/Nov")
    assert stated_date("Comment by Alex — 04/Dec/26 10:42", 2025) == (date(2026, 12, 4), "04/Dec/26")
    assert stated_date("raised on Nov 7, 2026", 2025) == (date(2026, 11, 7), "Nov 7, 2026")
    assert stated_date("11월 3일 승인, 적용값 4 확인", 2026) == (date(2026, 11, 3), "11월 3일")
    assert stated_date("2026-11-29T06:11:01 Creating", 2020) == (date(2026, 11, 29), "2026-11-29")
    # And a count is no date, nor is an impossible one
    assert stated_date("copies 1/4 after scaling, CurrentCopyCount 1/4", 2026) is None
    assert stated_date("- 13/45: nothing", 2026) is None


def test_a_line_is_recalled_only_past_fourteen_days_before_the_latest_date() -> None:
    # Given a timeline whose latest item is dated 12/01
    lines = ["- 10/28: quota error", "- 11/20: retried", "- 12/01 InService, no errors"]
    reference = latest_date(lines, None)
    assert reference is not None and reference[1] == "12/01"
    # When each item is read against it
    # Then only the item more than 14 days before is recalled, with the reason
    assert recalled(lines[0], reference) == "dated 10/28, 34 days before 12/01, the paste's latest date"
    assert recalled(lines[1], reference) == ""
    assert recalled("no date here", reference) == ""


def test_a_closed_tickets_dated_recap_of_a_fixed_quota_error_names_nothing() -> None:
    # Given a closed ticket: the quota error dated five weeks before this week's healthy deploy
    text = "\n".join(
        [
            "[CAP-88] g5.2xlarge endpoint quota - closed",
            f"- 10/28: new account, {QUOTA}",
            "- 11/03: increase approved, applied value 4",
            "- 12/01: nli-g5-2x deployed, InService in 7 minutes, no errors",
        ]
    )
    # When it is diagnosed
    result = diagnose(evidence_from_paste(text, origin="ticket"))
    # Then the recalled error is a candidate, not the answer
    assert result.id == "unknown"
    assert any("historical" in line and "dated 10/28" in line for line in result.evidence)


def test_the_same_error_dated_this_week_or_written_by_software_is_still_evidence() -> None:
    # Given the error dated three days before the latest item, and a log line timestamped weeks earlier
    recent = f"- 11/28: {QUOTA}\n- 12/01: still failing, asked for an increase"
    logged = "\n".join(
        [
            "2026-10-28T04:12:31Z An error occurred (ResourceLimitExceeded) when calling the CreateEndpoint "
            "operation: The account-level service limit 'ml.g5.2xlarge for endpoint usage' is 0 Instances",
            "2026-12-01T00:00:00Z retry scheduled",
        ]
    )
    # When each is diagnosed
    # Then both name the quota
    assert diagnose(evidence_from_paste(recent, origin="ticket")).id == "F39"
    assert diagnose(evidence_from_paste(logged, origin="log")).id == "F39"
