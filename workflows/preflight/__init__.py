"""Preflight: every failure catalogue entry with a static check, checked before any AWS resource exists.

Each check is a function of plain inputs (instance type, image URI, container count, memory,
environment...) in a module by concern: ``memory`` (F02, F07, F14), ``accelerators`` (F04, F08,
F09), ``containers`` (F05, F20), ``scaling`` (F11, F12), ``triton`` (F19, F22, F23), ``vllm``
(F25, F26), ``artifact`` (F01, F03, F17, F22, F28), ``instances`` (the instance table).
A hosting mode declares the ones that apply to it on itself (``HostingMode.checks`` in
``workflows/hosting/``); ``workflows.hosting.modes.run_checks`` runs the spec's mode's checks and reports every finding
together.

A domain package: it imports the primitives, the spec, images, the artifact files, conversion and the
GPU plan; the RunPreflight and CheckSpec steps, hosting and the CLI import it.
"""

from __future__ import annotations

from workflows.preflight.context import ArtifactView, PreflightContext, build_context, open_artifact
from workflows.preflight.registry import Check

__all__ = [
    "ArtifactView",
    "Check",
    "PreflightContext",
    "build_context",
    "open_artifact",
]
