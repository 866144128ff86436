"""Which checks run for which hosting mode, and running them all.

A hosting mode contributes its checks by registering them under its mode name when its module
is imported (``register("serverless", Check(...))``); ``checks_for`` imports every module of
``workflows.hosting`` and of this package first, so a new mode needs no edit here. Checks under
``ALL_MODES`` run for every mode.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from workflows.contracts import Finding, PreflightResult
from workflows.preflight.context import PreflightContext

ALL_MODES = "*"
NEEDS = ("artifact", "model_size")
Scope = Literal["all", "spec", "artifact"]
"""Which checks run: all; those on the spec alone (no needs: the CheckSpec step, before conversion);
or those that need the artifact or the model size (RunPreflight, once the spec's have run)."""


@dataclass(frozen=True)
class Check:
    """One static check: a function of the context, the catalogue IDs it covers, what it needs."""

    name: str
    ids: tuple[str, ...]
    run: Callable[[PreflightContext], list[Finding]]
    needs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = set(self.needs) - set(NEEDS)
        if unknown:
            raise ValueError(f"check {self.name!r} needs {sorted(unknown)}; known needs: {NEEDS}")

    @property
    def label(self) -> str:
        return f"{'/'.join(self.ids)} {self.name}"


_REGISTRY: dict[str, list[Check]] = {}
_DISCOVERED = False


def register(mode: str, *checks: Check) -> None:
    """Add checks for a hosting mode (or ALL_MODES); registering the same check twice is a no-op."""
    listed = _REGISTRY.setdefault(mode, [])
    listed.extend(c for c in checks if c not in listed)


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    import workflows.hosting

    # This module's own package by its folder: importing the package would import this module back.
    packages = {
        __name__.rpartition(".")[0]: [str(Path(__file__).parent)],
        "workflows.hosting": workflows.hosting.__path__,
    }
    for package, path in packages.items():
        for module in pkgutil.iter_modules(path):
            importlib.import_module(f"{package}.{module.name}")
    _DISCOVERED = True


def checks_for(mode: str) -> list[Check]:
    """The checks that apply to ``mode``: the ones for every mode, then the mode's own."""
    _discover()
    return [*_REGISTRY.get(ALL_MODES, []), *_REGISTRY.get(mode, [])]


def missing_needs(check: Check, context: PreflightContext) -> list[str]:
    have = {"artifact": context.artifact is not None, "model_size": context.model_mb is not None}
    return [need for need in check.needs if not have[need]]


def accepted(finding: Finding) -> Finding:
    """A finding the spec's ``preflight.accept`` lists: reported, but no longer blocking."""
    if finding.severity != "blocking":
        return finding
    return finding.model_copy(
        update={"severity": "warning", "message": f"accepted by preflight.accept: {finding.message}"}
    )


def run_checks(context: PreflightContext, scope: Scope = "all") -> PreflightResult:
    """Run every applicable check in ``scope`` and report all findings together, blocking ones first."""
    mode = context.spec.hosting.mode
    findings: list[Finding] = []
    checked, skipped = [], []
    checks = [c for c in checks_for(mode) if scope == "all" or (scope == "spec") == (not c.needs)]
    if not checks and scope == "all":
        skipped.append(f"no preflight checks are registered for hosting mode {mode!r}")
    for check in checks:
        lacking = missing_needs(check, context)
        if lacking:
            skipped.append(f"{check.label}: needs {' and '.join(_NEED_TEXT[n] for n in lacking)}")
            continue
        findings.extend(check.run(context))
        checked.append(check.label)
    findings = [accepted(f) if f.id in context.spec.preflight.accept else f for f in findings]
    findings.sort(key=lambda f: f.severity != "blocking")
    return PreflightResult(findings=findings, checked=checked, skipped=skipped)


_NEED_TEXT = {
    "artifact": "the artifact (pass --artifact DIR_OR_TARBALL)",
    "model_size": "the model size (an artifact, or a local model source)",
}
