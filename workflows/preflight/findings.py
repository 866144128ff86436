"""How preflight findings read in an error message: shared by CheckSpec, RunPreflight and the
hosting modes' last check before their first AWS call."""

from __future__ import annotations

from workflows.contracts import Finding
from workflows.errors import PreflightBlocked


def describe_findings(findings: list[Finding]) -> str:
    """One line per finding: ``F02 (blocking): message Fix: fix``."""
    return "\n".join(f"{f.id} ({f.severity}): {f.message} Fix: {f.fix}" for f in findings)


def refuse_blocking(findings: list[Finding], *, mode: str) -> None:
    """Stop before the first AWS call when a static check blocks (the preflight ran the same checks;
    this guards a deploy reached another way, such as a remediation's new instance type).

    Raises:
        PreflightBlocked: listing every blocking finding with its fix.
    """
    blocking = [f for f in findings if f.severity == "blocking"]
    if blocking:
        raise PreflightBlocked(
            f"{mode} deploy refused before any AWS call:\n"
            + "\n".join(f"{f.id} (blocking): {f.message} Fix: {f.fix}" for f in blocking)
        )
