"""Benchmark of the benchmark: what the client adds to every request, and how fast it can go.

The client runs against a no-op endpoint (``workflows.benchmark.noop_endpoint``, in its own
process so that it does not share this process's GIL) that answers InvokeEndpoint at once.

- Added latency p50: the client's end-to-end p50 (sign, send, read, classify: ``Invoker.call``)
  minus the p50 of a raw ``http.client`` POST of the same body over a kept-alive connection to the
  same server. The raw exchange is the floor any client pays (socket, kernel, server); the
  difference is what the client itself adds. The same is shown for boto3's ``invoke_endpoint``,
  the client the benchmark used before.
- Max requests/s: the benchmark engine's own ``measure`` (closed-loop threads, stable windows) at
  1, 2, 4 and 8 clients; the best stable throughput.

Methods are interleaved in blocks so that machine noise hits them alike. Targets: added latency
≤ 1 ms, ≥ 1000 requests/s. Writes bench/results/client_overhead.json (one flat object).

Usage: python bench/client_overhead.py [--calls 3000]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import boto3
import numpy as np
from botocore.config import Config

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workflows.benchmark.client import Invoker, Outcome  # noqa: E402
from workflows.benchmark.measure import measure  # noqa: E402
from workflows.benchmark.payloads import Shape, payload  # noqa: E402
from workflows.benchmark.policy import policy_for  # noqa: E402

ENDPOINT = "noop"
TARGET_ADDED_MS = 1.0
TARGET_RPS = 1000.0
RESULT = ROOT / "bench" / "results" / "client_overhead.json"


def start_server(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    port_file = folder / "port"
    process = subprocess.Popen(
        [sys.executable, "-m", "workflows.benchmark.noop_endpoint", "--port-file", str(port_file)],
        cwd=ROOT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 20
    while not port_file.exists():
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            raise RuntimeError("the no-op endpoint did not start")
        time.sleep(0.05)
    return process, f"http://127.0.0.1:{port_file.read_text()}"


def raw_call(url: str) -> Callable[[bytes], Outcome]:
    port = int(url.rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port)
    path = f"/endpoints/{ENDPOINT}/invocations"
    headers = {"Content-Type": "application/json", "Accept": "application/json"}

    def call(body: bytes) -> Outcome:
        started = time.perf_counter()
        connection.request("POST", path, body=body, headers=headers)
        connection.getresponse().read()
        return Outcome((time.perf_counter() - started) * 1000)

    return call


def boto3_call(runtime: object) -> Callable[[bytes], Outcome]:
    def call(body: bytes) -> Outcome:
        started = time.perf_counter()
        response = runtime.invoke_endpoint(  # type: ignore[attr-defined]
            EndpointName=ENDPOINT, Body=body, ContentType="application/json", Accept="application/json"
        )
        response["Body"].read()
        return Outcome((time.perf_counter() - started) * 1000)

    return call


def interleaved_p50(
    methods: dict[str, Callable[[bytes], Outcome]], body: bytes, calls: int
) -> dict[str, float]:
    latencies: dict[str, list[float]] = {name: [] for name in methods}
    for call in methods.values():
        for _ in range(100):
            call(body)
    block = 200
    for _ in range(max(1, calls // block)):
        for name, call in methods.items():
            latencies[name] += [call(body).latency_ms for _ in range(block)]
    return {name: float(np.median(values)) for name, values in latencies.items()}


def max_rps(call: Callable[[bytes], Outcome], body: bytes) -> tuple[float, int, bool]:
    best = (0.0, 0, False)
    for concurrency in (1, 2, 4, 8):
        figures = measure(
            call,
            [body],
            Shape(1, "natural"),
            concurrency=concurrency,
            min_duration_s=3.0,
            min_requests=100,
            max_duration_s=9.0,
        )
        if figures["requests_per_s"] > best[0]:
            best = (figures["requests_per_s"], concurrency, figures["stable"])
    return best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args()
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1"
    )
    small = payload(Shape(1, "natural"), seed=0)
    large = payload(Shape(8, 128), seed=0)
    with tempfile.TemporaryDirectory() as folder:
        server, url = start_server(Path(folder))
        try:
            runtime = boto3.client(
                "sagemaker-runtime",
                endpoint_url=url,
                config=Config(retries={"mode": "standard", "max_attempts": 1}, max_pool_connections=16),
            )
            invoker = Invoker.from_client(runtime, ENDPOINT, policy=policy_for("realtime"))
            methods = {"raw": raw_call(url), "invoker": invoker.call, "boto3": boto3_call(runtime)}
            p50 = interleaved_p50(methods, small, args.calls)
            p50_large = interleaved_p50(methods, large, args.calls // 2)
            rps, rps_concurrency, rps_stable = max_rps(invoker.call, small)
            boto3_rps, boto3_concurrency, _ = max_rps(boto3_call(runtime), small)
        finally:
            server.terminate()
            server.wait(timeout=10)
    figures = {
        "added_latency_p50_ms": round(p50["invoker"] - p50["raw"], 4),
        "max_requests_per_s": round(rps, 1),
        "max_requests_per_s_concurrency": rps_concurrency,
        "max_requests_per_s_stable": rps_stable,
        "raw_http_p50_ms": round(p50["raw"], 4),
        "client_p50_ms": round(p50["invoker"], 4),
        "added_latency_p50_ms_b8_s128": round(p50_large["invoker"] - p50_large["raw"], 4),
        "boto3_p50_ms": round(p50["boto3"], 4),
        "boto3_added_latency_p50_ms": round(p50["boto3"] - p50["raw"], 4),
        "boto3_added_latency_p50_ms_b8_s128": round(p50_large["boto3"] - p50_large["raw"], 4),
        "boto3_max_requests_per_s": round(boto3_rps, 1),
        "boto3_max_requests_per_s_concurrency": boto3_concurrency,
        "body_bytes": len(small),
        "body_bytes_b8_s128": len(large),
        "calls_per_method": args.calls,
        "target_added_latency_p50_ms": TARGET_ADDED_MS,
        "target_max_requests_per_s": TARGET_RPS,
        "meets_targets": p50["invoker"] - p50["raw"] <= TARGET_ADDED_MS and rps >= TARGET_RPS,
        "cpu_count": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    width = max(len(k) for k in figures)
    for name, value in figures.items():
        print(f"{name:<{width}}  {value}")
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
