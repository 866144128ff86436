"""A timed InvokeEndpoint client."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError, ReadTimeoutError

from workflows.aws import error_code


@dataclass(frozen=True)
class Outcome:
    latency_ms: float
    error: str | None = None
    message: str | None = None


class Invoker:
    """Sends prepared bodies to one endpoint and times each call (client side, end to end)."""

    def __init__(self, runtime: Any, endpoint_name: str) -> None:
        self.runtime = runtime
        self.endpoint_name = endpoint_name

    def call(self, body: bytes) -> Outcome:
        started = time.perf_counter()
        try:
            response = self.runtime.invoke_endpoint(
                EndpointName=self.endpoint_name,
                Body=body,
                ContentType="application/json",
                Accept="application/json",
            )
            response["Body"].read()
        except ReadTimeoutError as error:
            return Outcome((time.perf_counter() - started) * 1000, "ReadTimeout", str(error))
        except ClientError as error:
            return Outcome(
                (time.perf_counter() - started) * 1000, error_code(error) or "ClientError", str(error)
            )
        return Outcome((time.perf_counter() - started) * 1000)
