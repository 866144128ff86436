"""How preflight findings read in an error message: shared by CheckSpec and RunPreflight."""

from __future__ import annotations

from workflows.contracts import Finding


def describe_findings(findings: list[Finding]) -> str:
    """One line per finding: ``F02 (blocking): message Fix: fix``."""
    return "\n".join(f"{f.id} ({f.severity}): {f.message} Fix: {f.fix}" for f in findings)
