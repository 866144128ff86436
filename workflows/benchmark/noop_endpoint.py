"""A no-op SageMaker runtime endpoint: answers InvokeEndpoint at once, for measuring the client.

It speaks the runtime's REST shape (``POST /endpoints/<name>/invocations``, errors as
``x-amzn-ErrorType`` + ``{"message": ...}``), so the unchanged client reaches it through
``AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME``. A scripted start can answer the first requests with an
error (e.g. F12's "no capacity") or delay every answer, to exercise retries and timeouts.
It is a measuring instrument, not a stand-in for a model: it serves no model.

Usage: python -m workflows.benchmark.noop_endpoint --port-file FILE [--delay-ms N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_INVOKE = re.compile(r"^/endpoints/([^/]+)/invocations$")
NO_CAPACITY_MESSAGE = "Inference Component has no capacity to process this request"
ANSWER = b'{"embeddings": [[0.0]]}'


@dataclass
class Script:
    """What the endpoint does: an optional delay, and errors for the first ``fail_first`` requests."""

    delay_s: float = 0.0
    fail_first: int = 0
    fail_code: str = "ValidationError"
    fail_message: str = NO_CAPACITY_MESSAGE
    fail_status: int = 400
    requests: int = 0
    paths: list[str] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    keep_requests: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


def _handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802 (http.server API)
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if not _INVOKE.match(self.path) and self.path != "/invocations":
                self._send(404, b'{"message": "not found"}', {"Content-Type": "application/json"})
                return
            with script.lock:
                script.requests += 1
                number = script.requests
                if script.keep_requests:
                    script.paths.append(self.path)
                    script.bodies.append(body)
                    # A repeated header reads as its values joined, as HTTP combines them.
                    names = dict.fromkeys(self.headers.keys())
                    script.headers.append({k: ", ".join(self.headers.get_all(k) or []) for k in names})
            if script.delay_s:
                time.sleep(script.delay_s)
            if number <= script.fail_first:
                payload = json.dumps({"message": script.fail_message}).encode()
                self._send(
                    script.fail_status,
                    payload,
                    {"Content-Type": "application/json", "x-amzn-ErrorType": script.fail_code},
                )
                return
            self._send(200, ANSWER, {"Content-Type": "application/json"})

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


class NoopEndpoint:
    """Serves a ``Script`` on 127.0.0.1 in a background thread; a context manager."""

    def __init__(self, script: Script | None = None) -> None:
        self.script = script or Script()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.script))
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="noop-endpoint", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> NoopEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(Script(delay_s=args.delay_ms / 1000)))
    server.daemon_threads = True
    partial = args.port_file + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write(str(server.server_address[1]))
    os.replace(partial, args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
