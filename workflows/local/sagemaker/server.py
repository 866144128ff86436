"""HTTP front of the local SageMaker, for unchanged boto3 clients.

Point ``AWS_ENDPOINT_URL_SAGEMAKER``, ``AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME`` and
``AWS_ENDPOINT_URL_SAGEMAKER_INFERENCE_ROUTER_RUNTIME`` at it: control calls arrive as ``POST /`` with
``X-Amz-Target: SageMaker.<Operation>`` (JSON 1.1 protocol), runtime calls as
``POST /endpoints/<name>/invocations`` and router calls as ``POST /inference-routers/<name>/invocations``
(REST-JSON). Each request goes to the Region it is signed for (``regions``).
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from prometheus_client import CONTENT_TYPE_LATEST

from workflows.local.sagemaker.backend import ApiError, LocalSageMaker
from workflows.local.sagemaker.regions import LocalRegions, signed_region
from workflows.local.sagemaker.routers import Routed
from workflows.local.sagemaker.runtime import COMPONENT_HEADER, TARGET_HEADER

_INVOKE = re.compile(r"^/endpoints/([^/]+)/invocations$")
_ROUTE = re.compile(r"^/inference-routers/([^/]+)/invocations$")
ROUTING_TARGET_HEADER = "X-Amzn-SageMaker-Routing-Target-Name"
ROUTED_RESOURCE_HEADER = "X-Amzn-SageMaker-Invoked-Routed-Resource-Arn"
ROUTING_REASON_HEADER = "X-Amzn-SageMaker-Invoked-Routing-Reason"
VARIANT_HEADER = "x-Amzn-Invoked-Production-Variant"
# The local engine's own route (SageMaker has none): the endpoint's containers' /metrics, merged.
_METRICS = re.compile(r"^/endpoints/([^/]+)/metrics$")
_SNAKE = re.compile(r"(?<!^)(?=[A-Z])")


def operation_method(target: str) -> str:
    """``SageMaker.CreateEndpointConfig`` -> ``create_endpoint_config``."""
    return _SNAKE.sub("_", target.split(".", 1)[-1]).lower()


Answer = tuple[int, bytes, dict[str, str]]


def error_answer(error: ApiError, *, json_protocol: bool) -> Answer:
    """An error as SageMaker answers it: the message (and extra fields), the code in a header, and in
    the body too for the JSON 1.1 control plane."""
    payload: dict[str, Any] = {"message": error.message, **error.fields}
    if json_protocol:
        payload["__type"] = error.code
    headers = {"Content-Type": "application/x-amz-json-1.1", "x-amzn-ErrorType": error.code}
    return error.status, json.dumps(payload).encode(), headers


def endpoint_exposition(backend: LocalSageMaker, path: str, component: str | None) -> Answer:
    """``GET /endpoints/<name>/metrics``: the endpoint's containers' /metrics, merged; any other GET,
    or an endpoint (component) that does not exist or serves no metrics, is refused by name."""
    match = _METRICS.match(path.split("?", 1)[0])
    try:
        if not match:
            raise ApiError("UnknownOperationException", f"GET {path} is not supported locally.")
        text = backend.endpoint_metrics(unquote(match.group(1)), component)
    except ApiError as error:
        return error_answer(error, json_protocol=False)
    return 200, text, {"Content-Type": CONTENT_TYPE_LATEST}


def routed_answer(routed: Routed) -> Answer:
    """InvokeInferenceRouter's answer: the destination's body, and which destination served and why."""
    invocation = routed.invocation
    return (
        invocation.status,
        invocation.body,
        {
            "Content-Type": invocation.content_type,
            VARIANT_HEADER: invocation.variant,
            ROUTED_RESOURCE_HEADER: routed.destination,
            ROUTING_REASON_HEADER: routed.reason,
        },
    )


def operation(regions: LocalRegions, backend: LocalSageMaker, target: str) -> Any:
    """The method serving ``SageMaker.<Operation>``: a router's, in the signed Region, or the backend's."""
    if not target.startswith("SageMaker."):
        return None
    name = operation_method(target)
    if name.endswith(("_inference_router", "_inference_routers")):
        method = getattr(regions.routers, name, None)
        return None if method is None else lambda request: method(backend.region, request)
    return getattr(backend, name, None)


def forwarded_headers(headers: Any) -> dict[str, str]:
    """What the runtime passes on to the container: the content types, the target container or component."""
    forwarded = {
        "Content-Type": headers.get("Content-Type", "application/json"),
        "Accept": headers.get("Accept", "application/json"),
    }
    for header in (TARGET_HEADER, COMPONENT_HEADER):
        if headers.get(header):
            forwarded[header] = headers[header]
    return forwarded


def make_handler(regions: LocalRegions) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes; without TCP_NODELAY, Nagle + delayed ACK add ~40 ms.
        disable_nagle_algorithm = True

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _error(self, error: ApiError, *, json_protocol: bool) -> None:
            self._send(*error_answer(error, json_protocol=json_protocol))

        def do_GET(self) -> None:  # noqa: N802 (http.server API)
            backend = regions.for_request(self.headers.get("Authorization"))
            self._send(*endpoint_exposition(backend, self.path, self.headers.get(COMPONENT_HEADER)))

        def do_POST(self) -> None:  # noqa: N802 (http.server API)
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            path = self.path.split("?", 1)[0]
            backend = regions.for_request(self.headers.get("Authorization"))
            if match := _INVOKE.match(path):
                self._invoke(backend, unquote(match.group(1)), body)
                return
            if match := _ROUTE.match(path):
                self._route(unquote(match.group(1)), body)
                return
            target = self.headers.get("X-Amz-Target", "")
            method = operation(regions, backend, target)
            if method is None:
                self._error(
                    ApiError("UnknownOperationException", f"{target or self.path} is not supported locally."),
                    json_protocol=True,
                )
                return
            try:
                request = json.loads(body or b"{}")
                backend.refuse_denied(target.split(".", 1)[-1], request)
                result = method(request)
            except ApiError as error:
                self._error(error, json_protocol=True)
                return
            self._send(200, json.dumps(result).encode(), {"Content-Type": "application/x-amz-json-1.1"})

        def _route(self, name: str, body: bytes) -> None:
            region = signed_region(self.headers.get("Authorization"), regions.primary.region)
            try:
                routed = regions.routers.invoke_inference_router(
                    region,
                    name,
                    self.headers.get(ROUTING_TARGET_HEADER),
                    body,
                    forwarded_headers(self.headers),
                )
            except ApiError as error:
                self._error(error, json_protocol=False)
                return
            self._send(*routed_answer(routed))

        def _invoke(self, backend: LocalSageMaker, name: str, body: bytes) -> None:
            forwarded = forwarded_headers(self.headers)
            try:
                answer = backend.invoke_endpoint(name, body, forwarded)
            except ApiError as error:
                self._error(error, json_protocol=False)
                return
            self._send(
                answer.status,
                answer.body,
                {"Content-Type": answer.content_type, VARIANT_HEADER: answer.variant},
            )

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


class LocalSageMakerServer:
    """Serves the local SageMaker's Regions on 127.0.0.1 in a background thread; a context manager."""

    def __init__(self, regions: LocalRegions) -> None:
        self.regions = regions
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(regions))
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="local-sagemaker", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> LocalSageMakerServer:
        self.regions.primary.url = self.url
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)
