"""The hosting modes by name: the spec's ``hosting.mode`` picks one strategy object.

This table is the one list of modes: the deploy step, the wait loop, teardown, the preflight (each
mode's ``checks``) and the catalogue all read it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from workflows.errors import NotServableLocally, SpecInvalid
from workflows.hosting.base import HostingMode

if TYPE_CHECKING:
    from workflows.contracts import PreflightResult
    from workflows.preflight.context import PreflightContext
    from workflows.preflight.registry import Scope


@lru_cache(maxsize=1)
def strategies() -> dict[str, HostingMode[Any]]:
    """Every mode's strategy, keyed by its ``mode`` name."""
    from workflows.hosting import (
        components,
        lmi,
        multi_container,
        realtime,
        scale_to_zero,
        serverless,
        triton,
        vllm,
    )

    modes = (
        realtime.STRATEGY,
        multi_container.STRATEGY,
        serverless.STRATEGY,
        components.STRATEGY,
        scale_to_zero.STRATEGY,
        triton.STRATEGY,
        lmi.STRATEGY,
        vllm.STRATEGY,
    )
    return {mode.mode: mode for mode in modes}


def strategy_for(mode: str) -> HostingMode[Any]:
    """The strategy of a hosting mode.

    Raises:
        SpecInvalid: no mode of that name.
    """
    found = strategies().get(mode)
    if found is None:
        raise SpecInvalid(
            f"hosting mode {mode!r} is unknown.", fix=f"use one of {', '.join(sorted(strategies()))}"
        )
    return found


def refuse_unservable_locally(mode: str) -> None:
    """Fail early, before the local engine starts, for a mode it cannot serve.

    Raises:
        NotServableLocally: naming the mode and what it would need.
    """
    reason = strategy_for(mode).local_blocker
    if reason is not None:
        raise NotServableLocally(
            f"mode {mode} cannot be served locally: {reason}.",
            fix="run it on AWS (deploybench run SPEC without --local), or pick realtime, multi-container, "
            "serverless or inference-component for a local run",
        )


def run_checks(context: PreflightContext, scope: Scope = "all") -> PreflightResult:
    """Run every check the spec's hosting mode declares, in ``scope``.

    Raises:
        SpecInvalid: the spec names no known hosting mode.
    """
    return strategy_for(context.spec.hosting.mode).preflight(context, scope)
