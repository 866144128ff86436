"""Every AWS request the tests make, recorded from botocore's ``provide-client-params`` event.

The hook is installed in botocore's built-in handler list, so every session and client the
suite creates (the handlers' cached clients, moto's, the local SageMaker's) reports each call
with its service, operation, region and parameters as the caller gave them. A request is
attributed to the Lambda function whose handler is on the calling thread's stack; a thread a
handler started (boto3's transfer threads) inherits its function. Requests made elsewhere (test
setup, the CLI, the local SageMaker itself) carry no function and are not charged to a role.
"""

from __future__ import annotations

import base64
import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import botocore.handlers

from state_machines import FUNCTIONS

ROOT = Path(__file__).resolve().parents[2]
# lambdas/deploy_endpoint.py -> DeployEndpointFunctionArn: the module file of each row's handler.
_HANDLER_FILES = {
    str(ROOT / Path(*row.handler.split(".")[:-1])) + ".py": row.placeholder for row in FUNCTIONS
}
_THREAD_FUNCTION = "_deploybench_iam_function"
_CONTEXT_KEY = "deploybench_iam_request"
SETTINGS_PREFIX = "DEPLOYBENCH_"
SAGEMAKER_ROLE_ENV = "DEPLOYBENCH_SAGEMAKER_ROLE_ARN"


@dataclass(frozen=True)
class Request:
    """One AWS API call as the caller made it, and the deployment settings it ran under."""

    function: str | None
    service: str
    operation: str
    region: str
    params: dict[str, Any]
    # The deployment settings (DEPLOYBENCH_* variables) the caller ran with: what the stack's
    # references resolve to in this test.
    environment: tuple[tuple[str, str], ...] = ()
    # Filled in once the call returns: the HTTP status (0 when it raised before any response).
    outcome: dict[str, int] = field(default_factory=dict, compare=False, hash=False)

    @property
    def failed(self) -> bool:
        """The service refused the call (or it never got an answer): it changed nothing.

        IAM still authorizes a failed call, so it is checked; it just does not change what exists.
        """
        return "status" in self.outcome and not 200 <= self.outcome["status"] < 300

    @property
    def sagemaker_role_arn(self) -> str | None:
        return dict(self.environment).get(SAGEMAKER_ROLE_ENV)

    def describe(self) -> str:
        return f"{self.service}.{self.operation} by {self.function or 'no function'}"

    def as_json(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "service": self.service,
            "operation": self.operation,
            "region": self.region,
            "params": self.params,
        }


def handler_on_stack() -> str | None:
    """The placeholder of the innermost Lambda handler running on this thread, if any."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "handler" and code.co_filename in _HANDLER_FILES:
            return _HANDLER_FILES[code.co_filename]
        frame = frame.f_back  # type: ignore[assignment]
    return None


def current_function() -> str | None:
    return handler_on_stack() or getattr(threading.current_thread(), _THREAD_FUNCTION, None)


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, bytes):
        return base64.b64encode(value[:64]).decode()
    return f"<{type(value).__name__}>"


@dataclass
class Recorder:
    """Collects requests; ``take()`` hands over and forgets what was recorded since the last call."""

    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def hook(self, params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        request = Request(
            function=current_function(),
            service=model.service_model.service_name,
            operation=model.name,
            region=str(context.get("client_region") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"),
            params=_json_safe(params),
            environment=tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(SETTINGS_PREFIX))),
        )
        context[_CONTEXT_KEY] = request
        with self.lock:
            self.requests.append(request)

    @staticmethod
    def answered(http_response: Any, context: dict[str, Any], **_: Any) -> None:
        request = context.get(_CONTEXT_KEY)
        if isinstance(request, Request):
            request.outcome["status"] = int(getattr(http_response, "status_code", 0) or 0)

    @staticmethod
    def raised(context: dict[str, Any], **_: Any) -> None:
        request = context.get(_CONTEXT_KEY)
        if isinstance(request, Request) and "status" not in request.outcome:
            request.outcome["status"] = 0

    def peek(self) -> list[Request]:
        with self.lock:
            return list(self.requests)

    def take(self) -> list[Request]:
        with self.lock:
            taken, self.requests = self.requests, []
        return taken


@contextlib.contextmanager
def acting_as(placeholder: str) -> Iterator[None]:
    """Charge this thread's requests to a function, as if its handler made them (for a step's
    logic a test calls directly, where the mode cannot run through the local engine)."""
    thread = threading.current_thread()
    before = getattr(thread, _THREAD_FUNCTION, None)
    setattr(thread, _THREAD_FUNCTION, placeholder)
    try:
        yield
    finally:
        setattr(thread, _THREAD_FUNCTION, before)


RECORDER = Recorder()
_installed = False


def install() -> None:
    """Hook every botocore session created from now on, and make started threads inherit their function."""
    global _installed
    if _installed:
        return
    _installed = True
    hooks = (
        ("provide-client-params", RECORDER.hook),
        ("after-call", RECORDER.answered),
        ("after-call-error", RECORDER.raised),
    )
    botocore.handlers.BUILTIN_HANDLERS.extend(hooks)
    import boto3

    if boto3.DEFAULT_SESSION is not None:
        for event, hook in hooks:
            boto3.DEFAULT_SESSION.events.register(event, hook)
    original_start = threading.Thread.start

    def start(thread: threading.Thread) -> None:
        if getattr(thread, _THREAD_FUNCTION, None) is None:
            setattr(thread, _THREAD_FUNCTION, current_function())
        original_start(thread)

    threading.Thread.start = start  # type: ignore[method-assign]
