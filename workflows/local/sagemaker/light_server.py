"""A light stand-in for the inference container's model server, run as its own process.

It serves the SageMaker container contract on 127.0.0.1:$SAGEMAKER_BIND_TO_PORT: ``GET /ping`` and
``POST /invocations``, loading ``code/inference.py`` from the model directory and calling ``model_fn``
in each of ``$SAGEMAKER_MODEL_SERVER_WORKERS`` workers (default 1; each loads its own model, as MMS
workers do), then ``input_fn`` -> ``predict_fn`` -> ``output_fn`` per request, as the Hugging Face
inference toolkit does. Errors are answered as the toolkit answers them: status 400 with
``{"code": 400, "type": "InternalServerException", "message": ...}``; a failed load is retried on the
next request ("Model is not initialized, will try to load model again."). ``GET /metrics`` answers the
Prometheus exposition SageMaker's detailed observability scrapes from a bring-your-own container on
its serving port: a histogram of each /invocations request's time in the server.

Unlike the DLC it does not ``pip install -r code/requirements.txt``: it runs in the engine's own
environment. It imports nothing from deploybench, so it behaves like code inside the container.
Usage: python light_server.py --model-dir DIR
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import queue
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Histogram, generate_latest

# Bounds 10% apart from 0.1 ms to past 60 s (SageMaker's invocation limit): an interpolated p50 or
# p99 is within a bucket's 10% of the true figure.
LATENCY_BUCKETS = tuple(round(0.0001 * 1.1**step, 9) for step in range(141))


def load_user_module(model_dir: str) -> Any:
    path = os.path.join(model_dir, "code", "inference.py")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no code/inference.py in {model_dir}")
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location("inference", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _call(function: Any, *args: Any) -> Any:
    """Call a handler function with or without the trailing context argument, as the toolkit does."""
    accepted = len(inspect.signature(function).parameters)
    return function(*args[:accepted]) if accepted < len(args) + 1 else function(*args, None)


class ModelService:
    """One worker: the user module, its loaded model, and a lock (one request at a time)."""

    def __init__(self, model_dir: str) -> None:
        self.model_dir = model_dir
        self.module: Any = None
        self.model: Any = None
        self.error: str | None = None
        self.lock = threading.Lock()

    def load(self) -> None:
        try:
            self.module = self.module or load_user_module(self.model_dir)
            self.model = _call(self.module.model_fn, self.model_dir)
            print(f"Model loaded from {self.model_dir}", flush=True)
        except Exception as error:  # reported on every invocation, as the toolkit does
            self.error = str(error)
            traceback.print_exc()

    def predict(self, body: bytes, content_type: str, accept: str) -> tuple[int, bytes, str]:
        with self.lock:
            if self.error is not None:
                print("Model is not initialized, will try to load model again.", flush=True)
                self.error = None
                self.load()
                if self.error is not None:
                    return 400, _error_body(self.error), "application/json"
            try:
                data = (
                    _call(self.module.input_fn, body, content_type)
                    if hasattr(self.module, "input_fn")
                    else json.loads(body)
                )
                prediction = _call(self.module.predict_fn, data, self.model)
                if hasattr(self.module, "output_fn"):
                    output = _call(self.module.output_fn, prediction, accept)
                else:
                    output = json.dumps(prediction)
            except Exception as error:
                traceback.print_exc()
                return 400, _error_body(str(error)), "application/json"
        return (
            200,
            output.encode("utf-8") if isinstance(output, str) else output,
            accept or "application/json",
        )


def _error_body(message: str) -> bytes:
    """The body MMS answers a handler error with, byte for byte: Gson pretty-prints it and escapes
    HTML-unsafe characters (``'`` becomes ``\\u0027``), so error texts match across both servers."""
    text = json.dumps(
        {"code": 400, "type": "InternalServerException", "message": message}, indent=2, ensure_ascii=False
    )
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("=", "\\u003d"),
        ("'", "\\u0027"),
    ):
        text = text.replace(char, escaped)
    return (text + "\n").encode("utf-8")


class WorkerPool:
    """Requests go to whichever worker is free, one request per worker at a time."""

    def __init__(self, services: list[ModelService]) -> None:
        self.free: queue.Queue[ModelService] = queue.Queue()
        for service in services:
            self.free.put(service)

    def predict(self, body: bytes, content_type: str, accept: str) -> tuple[int, bytes, str]:
        service = self.free.get()
        try:
            return service.predict(body, content_type, accept)
        finally:
            self.free.put(service)


def latency_histogram(registry: CollectorRegistry) -> Histogram:
    return Histogram(
        "inference_request_duration_seconds",
        "Time of each /invocations request in the model server, from its body read to its answer sent.",
        registry=registry,
        buckets=LATENCY_BUCKETS,
    )


def make_handler(
    service: WorkerPool, registry: CollectorRegistry | None = None
) -> type[BaseHTTPRequestHandler]:
    exposed = registry or CollectorRegistry()
    latency = latency_histogram(exposed)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes; without TCP_NODELAY, Nagle + delayed ACK add ~40 ms.
        disable_nagle_algorithm = True

        def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 (http.server API)
            if self.path == "/ping":
                self._send(200, b'{"status": "Healthy"}\n')
            elif self.path == "/metrics":
                self._send(200, generate_latest(exposed), CONTENT_TYPE_LATEST)
            else:
                self._send(404, b'{"message": "not found"}')

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            if self.path != "/invocations":
                self._send(404, b'{"message": "not found"}')
                return
            started = time.perf_counter()
            status, output, content_type = service.predict(
                body,
                self.headers.get("Content-Type", "application/json"),
                self.headers.get("Accept", "application/json"),
            )
            self._send(status, output, content_type)
            latency.observe(time.perf_counter() - started)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


def legacy_archive_error(model_dir: str) -> str | None:
    """MMS 1.1.11 takes a model folder holding ``manifest.json`` (any case) for a legacy model archive;
    without a ``model`` entry it fails with this NullPointerException and stops (seen on the real stack)."""
    for name in os.listdir(model_dir):
        if name.lower() != "manifest.json":
            continue
        try:
            with open(os.path.join(model_dir, name), encoding="utf-8") as handle:
                if isinstance(json.load(handle).get("model"), dict):
                    return None
        except (OSError, ValueError, AttributeError):
            pass
        return (
            'java.lang.NullPointerException: Cannot invoke "com.amazonaws.ml.mms.archive.LegacyManifest$ModelInfo'
            '.getModelName()" because "this.modelInfo" is null'
        )
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", required=True)
    args = parser.parse_args()
    port = int(os.environ.get("SAGEMAKER_BIND_TO_PORT", "8080"))
    workers = max(1, int(os.environ.get("SAGEMAKER_MODEL_SERVER_WORKERS") or "1"))
    print(
        f"Starting light model server (stand-in for the DLC's Multi Model Server), {workers} worker(s)",
        flush=True,
    )
    legacy = legacy_archive_error(args.model_dir)
    if legacy is not None:
        print("com.amazonaws.ml.mms.ModelServer - Model server stopped.", flush=True)
        print(legacy, flush=True)
        sys.exit(1)
    services = [ModelService(args.model_dir) for _ in range(workers)]
    for service in services:
        service.load()
    server = ThreadingHTTPServer(("127.0.0.1", port), make_handler(WorkerPool(services)))
    server.daemon_threads = True
    print(f"Listening on 127.0.0.1:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
