"""Apply a remediation's ``DeployOverrides`` to a hosting spec: one mapping, every mode.

A mode deploys ``with_overrides(spec.hosting, attempt.overrides)`` instead of ``spec.hosting``;
each override that names a field the mode has replaces it, the others do not concern that mode.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from workflows.contracts import DeployOverrides

# DeployOverrides field -> the hosting spec field it replaces. extra_requirements is not a hosting
# setting: it changes the artifact (workflows/remediation/requirements.py, applied when packing).
HOSTING_FIELD = {
    "serverless_memory_mb": "memory_size_mb",
    "inference_ami_version": "inference_ami_version",
    "workers": "workers",
    "ort_intra_op_threads": "ort_intra_op_threads",
    "ic_min_memory_mb": "min_memory_mb",
}

Hosting = TypeVar("Hosting", bound=BaseModel)


def hosting_updates(hosting: BaseModel, overrides: DeployOverrides) -> dict[str, Any]:
    """The hosting fields ``overrides`` sets on this mode (``None`` overrides keep the spec's value)."""
    fields = type(hosting).model_fields
    updates = {}
    for override, field in HOSTING_FIELD.items():
        value = getattr(overrides, override)
        if value is not None and field in fields:
            updates[field] = value
    return updates


def with_overrides(hosting: Hosting, overrides: DeployOverrides) -> Hosting:
    """``hosting`` as the next attempt deploys it.

    Args:
        hosting: the spec's hosting section (any mode).
        overrides: what remediation changed (``DeployAttempt.overrides``).

    Returns:
        A copy with every override that concerns this mode applied (re-validated, so a value out
        of the field's range is refused here, not by AWS).
    """
    updates = hosting_updates(hosting, overrides)
    if not updates:
        return hosting
    return type(hosting).model_validate({**hosting.model_dump(), **updates})


def configured(hosting: BaseModel, overrides: DeployOverrides, override: str) -> Any:
    """The value the next attempt uses for ``override``'s hosting field (None where the mode has none)."""
    value = getattr(overrides, override)
    if value is not None:
        return value
    return getattr(hosting, HOSTING_FIELD[override], None)
