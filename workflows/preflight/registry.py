"""Running a hosting mode's checks: what a check is, which ones a scope selects, and their report.

A hosting mode declares its checks on itself (``HostingMode.checks``, ``workflows/hosting/``), so the
checks of a mode are read where the mode is defined and nothing is found by importing packages.
A check is a function of the context and of the mode's own hosting settings, typed by the mode's
spec, so it reads its fields without downcasting ``spec.hosting``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from workflows.contracts import Finding, PreflightResult
from workflows.preflight.context import PreflightContext

NEEDS = ("artifact", "model_size")
Scope = Literal["all", "spec", "artifact"]
"""Which checks run: all; those on the spec alone (no needs: the CheckSpec step, before conversion);
or those that need the artifact or the model size (RunPreflight, once the spec's have run)."""

# Contravariant: a check on any instance-backed mode's settings is a check of the real-time mode.
HostingT = TypeVar("HostingT", contravariant=True)


@dataclass(frozen=True)
class Check(Generic[HostingT]):
    """One static check: a function of the context and the mode's hosting settings, the catalogue IDs
    it covers, what it needs."""

    name: str
    ids: tuple[str, ...]
    run: Callable[[PreflightContext, HostingT], list[Finding]]
    needs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = set(self.needs) - set(NEEDS)
        if unknown:
            raise ValueError(f"check {self.name!r} needs {sorted(unknown)}; known needs: {NEEDS}")

    @property
    def label(self) -> str:
        return f"{'/'.join(self.ids)} {self.name}"


def missing_needs(check: Check[HostingT], context: PreflightContext) -> list[str]:
    have = {"artifact": context.artifact is not None, "model_size": context.model_mb is not None}
    return [need for need in check.needs if not have[need]]


def accepted(finding: Finding) -> Finding:
    """A finding the spec's ``preflight.accept`` lists: reported, but no longer blocking."""
    if finding.severity != "blocking":
        return finding
    return finding.model_copy(
        update={"severity": "warning", "message": f"accepted by preflight.accept: {finding.message}"}
    )


def in_scope(check: Check[HostingT], scope: Scope) -> bool:
    return scope == "all" or (scope == "spec") == (not check.needs)


def run_declared(
    context: PreflightContext,
    hosting: HostingT,
    checks: Sequence[Check[HostingT]],
    scope: Scope = "all",
) -> PreflightResult:
    """Run ``checks`` in ``scope`` on ``hosting`` and report all findings together, blocking ones first."""
    mode = context.spec.hosting.mode
    findings: list[Finding] = []
    checked, skipped = [], []
    selected = [c for c in checks if in_scope(c, scope)]
    if not selected and scope == "all":
        skipped.append(f"no preflight checks are declared for hosting mode {mode!r}")
    for check in selected:
        lacking = missing_needs(check, context)
        if lacking:
            skipped.append(f"{check.label}: needs {' and '.join(_NEED_TEXT[n] for n in lacking)}")
            continue
        findings.extend(check.run(context, hosting))
        checked.append(check.label)
    findings = [accepted(f) if f.id in context.spec.preflight.accept else f for f in findings]
    findings.sort(key=lambda f: f.severity != "blocking")
    return PreflightResult(findings=findings, checked=checked, skipped=skipped)


_NEED_TEXT = {
    "artifact": "the artifact (pass --artifact DIR_OR_TARBALL)",
    "model_size": "the model size (an artifact, or a local model source)",
}


ACCOUNT_CHECKS: dict[str, tuple[str, ...]] = {
    "account quotas per instance type, job and serverless concurrency (on AWS, workflows.preflight.quotas)": (
        "F39",
    ),
}
"""Checks the gate runs for every hosting mode on AWS (``workflows.hosting.gate``), by the catalogue IDs
they cover: the account, not the mode, decides them."""
