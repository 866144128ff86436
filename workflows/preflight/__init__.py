"""Preflight: every failure catalogue entry with a static check, checked before any AWS resource exists.

Each check is a function of plain inputs (instance type, image URI, container count, memory,
environment...) in a module by concern: ``memory`` (F02, F07, F14), ``accelerators`` (F04, F08,
F09), ``containers`` (F05, F20), ``scaling`` (F11, F12), ``triton`` (F19, F22, F23), ``vllm``
(F25, F26), ``artifact`` (F01, F03, F17, F22, F28), ``instances`` (the instance table).
A hosting mode wires the ones that apply to it into the ``registry`` under its mode name
(``realtime`` does so in ``realtime.py``); ``run_checks`` runs them all and reports every
finding together.
"""

from __future__ import annotations

from workflows.preflight.context import ArtifactView, PreflightContext, build_context, open_artifact
from workflows.preflight.registry import ALL_MODES, Check, checks_for, register, run_checks

__all__ = [
    "ALL_MODES",
    "ArtifactView",
    "Check",
    "PreflightContext",
    "build_context",
    "checks_for",
    "open_artifact",
    "register",
    "run_checks",
]
