"""Client timeouts and retries per hosting mode, kept as data keyed by the mode's name.

A hosting mode is wired to its client behaviour by its ``mode`` name alone: adding a mode is one
entry here, not a change to the client.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from workflows.backoff import Backoff

NO_CAPACITY = "NoCapacity"
"""Error kind of "Inference Component has no capacity to process this request" (F12)."""

# SageMaker cuts an invocation at 60 s (the container's limit); a client timeout a little longer
# lets that answer arrive as the ModelError it is instead of a client-side ReadTimeout.
_REALTIME_READ_TIMEOUT_S = 70.0


@dataclass(frozen=True)
class ClientPolicy:
    """How the benchmark client talks to one hosting mode.

    Attributes:
        read_timeout_s: socket read timeout of one attempt.
        connect_timeout_s: TCP/TLS connect timeout.
        retry_kinds: error kinds retried with backoff (counted, never hidden).
        retry_initial_s: first backoff.
        retry_backoff: factor applied after each retry.
        retry_max_s: longest single backoff.
        retry_budget_s: give up retrying once this much time passed since the first attempt.
    """

    read_timeout_s: float = _REALTIME_READ_TIMEOUT_S
    connect_timeout_s: float = 10.0
    retry_kinds: tuple[str, ...] = ()
    retry_initial_s: float = 1.0
    retry_backoff: float = 1.5
    retry_max_s: float = 10.0
    retry_budget_s: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def backoff(self) -> Backoff:
        """The retry schedule: ``backoff.delay_s(n)`` is the wait before retry number ``n`` (1-based)."""
        return Backoff(self.retry_initial_s, self.retry_backoff, self.retry_max_s)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["retry_kinds"] = list(self.retry_kinds)
        data["notes"] = list(self.notes)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClientPolicy:
        return cls(
            **{
                **data,
                "retry_kinds": tuple(data.get("retry_kinds", ())),
                "notes": tuple(data.get("notes", ())),
            }
        )


_SCALE_FROM_ZERO = ClientPolicy(
    retry_kinds=(NO_CAPACITY,),
    retry_initial_s=1.0,
    retry_backoff=1.5,
    retry_max_s=10.0,
    # The field measured 471 s and 95 retries from the first request to the first success (F12).
    retry_budget_s=900.0,
    notes=("F12: at zero copies requests fail at once with 'no capacity'; retried with backoff",),
)

POLICIES: dict[str, ClientPolicy] = {
    "realtime": ClientPolicy(),
    "multi-container": ClientPolicy(),
    # Cold starts exceed botocore's 60 s default read timeout (12.8 s measured, and more; F15).
    "serverless": ClientPolicy(read_timeout_s=300.0, notes=("F15: read_timeout 300 s for cold starts",)),
    "inference-component": replace(_SCALE_FROM_ZERO, retry_budget_s=600.0),
    "scale-to-zero": _SCALE_FROM_ZERO,
    # TensorRT builds an engine per batch shape: the first call may exceed the 60 s limit and come
    # back as ModelError; warmup tolerates it (F21).
    "triton": ClientPolicy(notes=("F21: first call per shape may time out while the engine compiles",)),
    # LMI loads the model at the first request (F18).
    "lmi": ClientPolicy(read_timeout_s=300.0, notes=("F18: first request includes the model load",)),
    "vllm": ClientPolicy(read_timeout_s=300.0),
}


def policy_for(mode: str) -> ClientPolicy:
    """The client policy of a hosting mode.

    Raises:
        KeyError: naming the known modes, when ``mode`` has no policy.
    """
    try:
        return POLICIES[mode]
    except KeyError:
        raise KeyError(
            f"no client policy for hosting mode {mode!r}; known modes: {', '.join(sorted(POLICIES))}"
        ) from None
