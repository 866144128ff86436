"""Run the real Lambda handlers in-process when moto's Step Functions interpreter invokes a function.

moto's Docker-free Lambda backend only echoes its input; this seam replaces its ``invoke`` so a
Task state runs the handler. A raised exception becomes the payload Lambda returns for an
unhandled error (``errorType`` = class name, header ``x-amz-function-error``), so
``ErrorEquals: ["CapacityStall"]`` matches exactly as on AWS.
"""

from __future__ import annotations

import importlib
import io
import json
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from moto.awslambda_simple.models import LambdaSimpleBackend

Handler = Callable[[dict[str, Any], Any], Any]


@dataclass
class LocalLambdaContext:
    """The attributes of a Lambda context object that handlers and Powertools read."""

    function_name: str
    invoked_function_arn: str
    memory_limit_in_mb: int
    timeout_s: int
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    started: float = field(default_factory=time.monotonic)

    @property
    def log_group_name(self) -> str:
        return f"/aws/lambda/{self.function_name}"

    @property
    def log_stream_name(self) -> str:
        return f"local/{self.aws_request_id}"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.timeout_s - (time.monotonic() - self.started)) * 1000))


@dataclass(frozen=True)
class RegisteredFunction:
    handler_path: str
    memory_mb: int
    timeout_s: int

    def load(self) -> Handler:
        module, _, attribute = self.handler_path.rpartition(".")
        return getattr(importlib.import_module(module), attribute)


_route = threading.local()


class ThreadRoutedStream(io.TextIOBase):
    """sys.stdout/sys.stderr stand-in: writes from a thread running a handler go to that run's Lambda
    log file (as CloudWatch Logs would hold them); everything else goes to the terminal."""

    def __init__(self, default: TextIO) -> None:
        self.default = default

    def _target(self) -> TextIO:
        return getattr(_route, "stream", None) or self.default

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def isatty(self) -> bool:
        return self.default.isatty()

    def fileno(self) -> int:
        return self.default.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.default, "encoding", "utf-8")


class LambdaSeam:
    """Installs the in-process invoke on moto's simple Lambda backend; a context manager."""

    def __init__(
        self, functions: dict[str, RegisteredFunction], *, log: TextIO, account: str, region: str
    ) -> None:
        self.functions = functions
        self.log = log
        self.account = account
        self.region = region
        self.invocations: list[tuple[str, str | None]] = []
        self._original: Any = None
        self._streams: tuple[TextIO, TextIO] | None = None

    def _invoke(self, function_name: str, body: Any) -> tuple[bytes, bool]:
        name = function_name.split(":function:")[-1].split(":")[0]
        function = self.functions[name]
        event = json.loads(body) if body else {}
        context = LocalLambdaContext(
            function_name=name,
            invoked_function_arn=f"arn:aws:lambda:{self.region}:{self.account}:function:{name}",
            memory_limit_in_mb=function.memory_mb,
            timeout_s=function.timeout_s,
        )
        _route.stream = self.log
        try:
            result = function.load()(event, context)
        except Exception as error:  # every handler error becomes a Lambda function error
            traceback.print_exc(file=self.log)
            self.invocations.append((name, type(error).__name__))
            payload = {
                "errorType": type(error).__name__,
                "errorMessage": str(error),
                "requestId": context.aws_request_id,
            }
            return json.dumps(payload).encode(), True
        finally:
            self.log.flush()
            _route.stream = None
        self.invocations.append((name, None))
        return json.dumps(result).encode(), False

    def __enter__(self) -> LambdaSeam:
        seam = self

        def invoke(
            backend: Any, function_name: str, qualifier: Any, body: Any, headers: Any, response_headers: Any
        ) -> bytes:
            payload, failed = seam._invoke(function_name, body)
            if failed:
                response_headers["x-amz-function-error"] = "Unhandled"
            return payload

        self._original = LambdaSimpleBackend.invoke
        LambdaSimpleBackend.invoke = invoke  # type: ignore[method-assign,assignment]
        self._streams = (sys.stdout, sys.stderr)
        sys.stdout = ThreadRoutedStream(sys.stdout)
        sys.stderr = ThreadRoutedStream(sys.stderr)
        return self

    def __exit__(self, *exc: object) -> None:
        LambdaSimpleBackend.invoke = self._original  # type: ignore[method-assign]
        if self._streams:
            sys.stdout, sys.stderr = self._streams
