"""What a read-only readiness check of an account reports: ``deploybench doctor --aws`` and the VPC
check of a spec (``workflows.readiness.network``) both speak in these findings."""

from __future__ import annotations

from dataclasses import dataclass

OK, FAIL, UNVERIFIED = "ok", "fail", "unverified"


@dataclass(frozen=True)
class DoctorCheck:
    """One finding: what was checked, and ok, fail (with the fix) or unverified (with why)."""

    area: str
    subject: str
    status: str
    detail: str
