"""The spec's ``remediation`` section: how often each automatic fix may run (re-exported by
``workflows.spec.pipeline``)."""

from __future__ import annotations

from pydantic import Field

from workflows.models import Strict


class RemediationSpec(Strict):
    """Bounds on the automatic fixes a diagnosis may trigger (actions: workflows/diagnosis/actions.py)."""

    enabled: bool = Field(True, description="Apply automatic fixes; false fails on the first diagnosis.")
    max_total_attempts: int = Field(
        4, ge=1, le=20, description="Deploy attempts in all, whatever the actions (the first one counts)."
    )
    next_instance_type: int = Field(
        3,
        ge=0,
        le=10,
        description="F06: fallback instance types to try (also bounded by hosting.instance_type_fallbacks).",
    )
    larger_instance: int = Field(
        2, ge=0, le=10, description="F07: redeploys on a larger listed instance type."
    )
    next_memory_size: int = Field(
        5, ge=0, le=5, description="F14: serverless memory steps up (to 6144 at most)."
    )
    newer_ami: int = Field(1, ge=0, le=3, description="F20: redeploys with a newer InferenceAmiVersion.")
    single_worker: int = Field(
        1, ge=0, le=1, description="F02: redeploy with one worker and ORT threads = cores."
    )
    lower_ic_memory: int = Field(3, ge=0, le=10, description="F10: MinMemoryRequiredInMb steps down.")
    add_requirement: int = Field(
        1, ge=0, le=5, description="F01/F17: repacks with a missing requirement added."
    )
    warm_shapes: int = Field(
        2, ge=0, le=10, description="F21/F18: warmup reruns tolerating first-call timeouts."
    )
    retry_with_backoff: int = Field(
        5, ge=0, le=100, description="F12/F15: retries of the failed invocation step with backoff."
    )

    def attempts_for(self, action: str) -> int:
        """How many times ``action`` may run; 0 for ``fail``, an unknown action, or when disabled."""
        if (
            not self.enabled
            or action not in type(self).model_fields
            or action in ("enabled", "max_total_attempts")
        ):
            return 0
        return int(getattr(self, action))
