"""The benchmark client: signed InvokeEndpoint calls over kept-alive connections, timed end to end.

Built from a boto3 ``sagemaker-runtime`` client (its endpoint URL and region) and the credentials
of the session it came from, it sends the request boto3 would send, signed by botocore's own
SigV4 signer called directly on the request, but without the client's per-call machinery (event
hooks, parameter validation, serialization, connection pool): ``invoke_endpoint`` adds ~1.2-1.4 ms
a call over a raw HTTP exchange, this client ~0.2 ms, of which the signer is ~0.12 ms
(``bench/client_overhead.py``, 2 busy cores). Errors are classified by the kind SageMaker names
(``x-amzn-ErrorType``), and the hosting mode's policy decides timeouts and which kinds are
retried with backoff (counted, never hidden).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import botocore.session
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

from workflows.benchmark.policy import NO_CAPACITY, ClientPolicy
from workflows.benchmark.transport import Transport

if TYPE_CHECKING:
    from types_boto3_sagemaker_runtime import SageMakerRuntimeClient

# InvokeEndpoint is signed for the "sagemaker" service (botocore's sagemaker-runtime model:
# signingName), not "sagemaker-runtime".
SIGNING_NAME = "sagemaker"
READ_TIMEOUT = "ReadTimeout"
CONNECTION_ERROR = "ConnectionError"
TIMEOUT_KINDS = frozenset({READ_TIMEOUT, "ModelError"})
_NO_CAPACITY_TEXT = "no capacity to process this request"

# InvokeEndpoint parameters that travel as headers (botocore's sagemaker-runtime model).
_HEADER_PARAMETERS = {
    "InferenceComponentName": "X-Amzn-SageMaker-Inference-Component",
    "TargetContainerHostname": "X-Amzn-SageMaker-Target-Container-Hostname",
    "TargetVariant": "X-Amzn-SageMaker-Target-Variant",
    "TargetModel": "X-Amzn-SageMaker-Target-Model",
    "CustomAttributes": "X-Amzn-SageMaker-Custom-Attributes",
}


@dataclass(frozen=True, slots=True)
class Outcome:
    """One request as the caller saw it: total latency including any retries."""

    latency_ms: float
    error: str | None = None
    message: str | None = None
    retries: int = 0


def error_kind(status: int, headers: Mapping[str, str], body: bytes) -> tuple[str, str]:
    """(kind, message) of an error answer, as botocore's REST-JSON parser reads it."""
    try:
        data = json.loads(body or b"{}")
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    code = headers.get("x-amzn-errortype") or data.get("__type") or data.get("code") or f"HTTP{status}"
    code = str(code).split(":", 1)[0].rsplit("#", 1)[-1]
    message = str(data.get("message") or data.get("Message") or body[:500].decode("utf-8", "replace"))
    if _NO_CAPACITY_TEXT in message.lower():
        return NO_CAPACITY, message
    return code, message


class Invoker:
    """Invokes one endpoint (optionally one inference component or container) under a policy.

    ``credentials`` is a botocore credentials object (``Session.get_credentials()``). Each request
    is signed with ``get_frozen_credentials()``: refreshable credentials (a processing job's or a
    Lambda's role) renew before they expire, and one request never mixes an old key with a new token.
    """

    def __init__(
        self,
        *,
        endpoint_url: str,
        region: str,
        credentials: Any,
        endpoint_name: str,
        policy: ClientPolicy,
        target: Mapping[str, str] | None = None,
        content_type: str = "application/json",
        accept: str = "application/json",
    ) -> None:
        unknown = set(target or {}) - set(_HEADER_PARAMETERS)
        if unknown:
            raise ValueError(
                f"unknown InvokeEndpoint parameters {sorted(unknown)}; use {sorted(_HEADER_PARAMETERS)}"
            )
        if credentials is None:
            raise ValueError(
                "no AWS credentials for signing InvokeEndpoint requests; configure credentials "
                "(environment, profile or role) the way boto3 finds them"
            )
        self.endpoint_url = endpoint_url
        self.endpoint_name = endpoint_name
        self.policy = policy
        self.region = region
        self.credentials = credentials
        self.transport = Transport(
            endpoint_url, connect_timeout_s=policy.connect_timeout_s, read_timeout_s=policy.read_timeout_s
        )
        self.path = f"/endpoints/{quote(endpoint_name, safe='')}/invocations"
        transport = self.transport
        # The URL and Host signed are exactly what the transport sends (http.client then adds no
        # Host of its own): a signature over anything else is refused.
        self.url = f"{transport.scheme}://{transport.host_header}{transport.path_prefix}{self.path}"
        self.headers = {"Host": transport.host_header, "Content-Type": content_type, "Accept": accept}
        self.headers.update({_HEADER_PARAMETERS[k]: v for k, v in (target or {}).items()})

    @classmethod
    def from_client(
        cls,
        runtime: SageMakerRuntimeClient,
        endpoint_name: str,
        *,
        policy: ClientPolicy,
        target: Mapping[str, str] | None = None,
        session: Any | None = None,
    ) -> Invoker:
        """An invoker for the endpoint URL and region of a boto3 ``sagemaker-runtime`` client (so
        ``AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME`` applies unchanged).

        Args:
            runtime: The client; only its public ``meta`` is read.
            endpoint_name: The endpoint to invoke.
            policy: Timeouts and retries for the hosting mode.
            target: InvokeEndpoint header parameters (``InferenceComponentName``, ...).
            session: The boto3 or botocore session the client was made from; its credentials sign
                the requests. None: a new session, which resolves the default chain boto3 uses
                (environment, profile, container or instance role).

        Raises:
            ValueError: no credentials were found, or ``target`` names an unknown parameter.
        """
        return cls(
            endpoint_url=runtime.meta.endpoint_url,
            region=runtime.meta.region_name,
            credentials=(session or botocore.session.Session()).get_credentials(),
            endpoint_name=endpoint_name,
            policy=policy,
            target=target,
        )

    def sign(self, body: bytes) -> dict[str, str]:
        """The request's headers, signed by botocore's SigV4 signer (X-Amz-Date, the session token
        when there is one, Authorization)."""
        request = AWSRequest(method="POST", url=self.url, data=body, headers=self.headers)
        SigV4Auth(self.credentials.get_frozen_credentials(), SIGNING_NAME, self.region).add_auth(request)
        return dict(request.headers.items())

    def _attempt(self, body: bytes) -> tuple[str | None, str | None]:
        headers = self.sign(body)
        try:
            response = self.transport.post(self.path, body, headers)
        except TimeoutError as error:
            return READ_TIMEOUT, f"Read timeout on endpoint URL: {self.endpoint_url}{self.path}: {error}"
        except OSError as error:
            return CONNECTION_ERROR, f"{type(error).__name__}: {error}"
        except Exception as error:  # http.client protocol errors
            return CONNECTION_ERROR, f"{type(error).__name__}: {error}"
        if response.status < 300:
            return None, None
        return error_kind(response.status, response.headers, response.body)

    def call(self, body: bytes) -> Outcome:
        """Send ``body``; retry the policy's error kinds with backoff within its budget."""
        started = time.perf_counter()
        retries = 0
        while True:
            error, message = self._attempt(body)
            elapsed = time.perf_counter() - started
            if error is None or error not in self.policy.retry_kinds:
                return Outcome(elapsed * 1000.0, error, message, retries)
            wait = self.policy.backoff.delay_s(retries + 1)
            if elapsed + wait > self.policy.retry_budget_s:
                return Outcome(elapsed * 1000.0, error, message, retries)
            retries += 1
            time.sleep(wait)

    def close(self) -> None:
        self.transport.close()
