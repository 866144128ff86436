"""Preflight step: static checks before any SageMaker resource exists.

All findings are reported together; a blocking finding fails the run before deploy.
"""

from __future__ import annotations

import re
from typing import Any

from workflows.contracts import Finding, PreflightRequest, PreflightResult
from workflows.errors import PreflightBlocked
from workflows.storage import get_text

_ORT_REQUIREMENT = re.compile(r"^\s*onnxruntime(-gpu)?\s*([=<>~!].*)?$", re.MULTILINE)
_OPTIMUM = re.compile(r"^\s*optimum", re.MULTILINE)


def check_requirements(requirements: str) -> list[Finding]:
    """F01: the DLC has no onnxruntime; F28: optimum pins transformers<4.58 and breaks the container."""
    findings = []
    if not _ORT_REQUIREMENT.search(requirements):
        findings.append(
            Finding(
                id="F01",
                severity="blocking",
                message="code/inference.py imports onnxruntime but code/requirements.txt does not install it; "
                "the endpoint would pass its health check and answer every request with "
                "\"No module named 'onnxruntime'\".",
                fix="add onnxruntime==<the version used for conversion> to code/requirements.txt and repack",
            )
        )
    if _OPTIMUM.search(requirements):
        findings.append(
            Finding(
                id="F28",
                severity="blocking",
                message="code/requirements.txt installs optimum, which pins transformers<4.58 and clashes with the container.",
                fix="remove optimum; serving needs only onnxruntime",
            )
        )
    return findings


def preflight(request: PreflightRequest, *, s3: Any) -> PreflightResult:
    """Raises PreflightBlocked listing every blocking finding."""
    requirements = get_text(s3, f"{request.convert.staging_uri}code/requirements.txt")
    findings = check_requirements(requirements)
    blocking = [f for f in findings if f.severity == "blocking"]
    if blocking:
        raise PreflightBlocked(
            "preflight found problems that would fail on AWS:\n"
            + "\n".join(f"{f.id}: {f.message} Fix: {f.fix}" for f in blocking)
        )
    return PreflightResult(findings=findings)
