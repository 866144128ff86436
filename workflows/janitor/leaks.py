"""What the janitor reports and how it decides: a leak, a pass's report, a resource's expiry.

Shared by the janitor's SageMaker sweep (``workflows/janitor/cleanup.py``) and its scaling and alarm sweep
(``workflows/janitor/scaling.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Literal

from botocore.exceptions import ClientError
from pydantic import Field

from workflows.aws.clients import error_code, error_message, is_busy, is_not_found
from workflows.contracts import Contract
from workflows.naming import TAG_EXPIRES_AT, TAG_KEEP, TAG_MANAGED

Action = Literal["deleted", "stopped", "busy", "failed", "would_delete", "would_stop"]


class Leak(Contract):
    kind: str
    name: str
    expired_at: datetime
    action: Action
    detail: str = ""


class JanitorReport(Contract):
    checked_at: datetime
    dry_run: bool
    leaks: list[Leak] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list, description="Listings that failed (the rest still ran).")
    report_uri: str | None = None

    @property
    def removed(self) -> int:
        return sum(leak.action in ("deleted", "stopped") for leak in self.leaks)

    @property
    def remaining(self) -> int:
        """Leaks still costing money after this pass (busy or failed)."""
        return sum(leak.action in ("busy", "failed", "would_delete", "would_stop") for leak in self.leaks)


def _parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def expiry(tags: dict[str, str], created: datetime | None, ttl: timedelta) -> datetime | None:
    """When a resource expires; None when it is not deploybench's to delete.

    Untagged, unmanaged and kept resources are never touched; a managed resource whose
    ``expires-at`` is missing or unreadable expires ``ttl`` after its creation.
    """
    if tags.get(TAG_MANAGED) != "true" or tags.get(TAG_KEEP) == "true":
        return None
    return _parse_time(tags.get(TAG_EXPIRES_AT)) or (created + ttl if created else None)


def act(call: Callable[..., Any], **kwargs: Any) -> tuple[Action | None, str]:
    """Make one delete (or stop) call: ``deleted``, ``busy`` or ``failed``; None when already gone."""
    try:
        call(**kwargs)
    except ClientError as error:
        if is_not_found(error):
            return None, "already gone"
        if is_busy(error):
            return "busy", error_message(error)
        return "failed", f"{error_code(error)}: {error_message(error)}"
    return "deleted", ""
