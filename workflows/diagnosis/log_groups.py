"""A CloudWatch Logs group's events for the diagnosis: paged, bounded, and every failure a note.

``deploybench diagnose --endpoint`` reads the endpoint's container log group and ``--traces`` its traces
group (``workflows.diagnosis.collect``, ``workflows.diagnosis.traces``) the same way: FilterLogEvents from
a start time, oldest first, at most a bounded number of events, so a busy group cannot grow the evidence
without end. A group that does not exist or a call that fails ends the events with a note that says so;
the diagnosis then goes on with what the other sources hold.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from workflows.aws.clients import error_code, error_message
from workflows.diagnosis.evidence import Evidence

if TYPE_CHECKING:
    from types_boto3_logs import CloudWatchLogsClient
    from types_boto3_logs.type_defs import FilteredLogEventTypeDef

PAGE_LIMIT = 1000
"""Events asked for a page: FilterLogEvents returns up to 10,000, and 1000 keeps one page's memory small."""


def group_events(
    evidence: Evidence,
    *,
    logs: CloudWatchLogsClient,
    group: str,
    since: datetime,
    until: datetime | None = None,
    most: int,
    pages: int,
    missing: str,
) -> Iterator[FilteredLogEventTypeDef]:
    """``group``'s events from ``since`` (to ``until``), at most ``most`` over at most ``pages`` pages.

    A group that does not exist adds ``missing`` to the evidence's notes, a call that fails adds its error;
    either ends the events. Events left past the bound are named in a note.
    """
    kwargs: dict[str, Any] = {"logGroupName": group, "startTime": int(since.timestamp() * 1000)}
    if until is not None:
        kwargs["endTime"] = int(until.timestamp() * 1000)
    read = 0
    for _ in range(pages):
        try:
            page = logs.filter_log_events(**kwargs, limit=min(PAGE_LIMIT, most - read))
        except ClientError as error:
            if error_code(error) == "ResourceNotFoundException":
                evidence.notes.append(f"no log group {group}: {missing}")
            else:
                evidence.notes.append(f"read {group}: {error_code(error)}: {error_message(error)}")
            return
        except BotoCoreError as error:
            evidence.notes.append(f"read {group}: {error}")
            return
        for event in page.get("events", []):
            yield event
            read += 1
        token = page.get("nextToken")
        if not token:
            return
        if read >= most:
            evidence.notes.append(f"{group}: read the first {read} events only (the bound)")
            return
        kwargs["nextToken"] = token
