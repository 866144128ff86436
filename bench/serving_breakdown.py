"""Where a served b1 request's time goes, path by path, in one run (companion to serving_overhead.py).

The same MiniLM artifact and b1 natural bodies go five ways, in alternating blocks:

* ``boto3``: ``invoke_endpoint`` -> the local SageMaker's front -> Multi Model Server;
* ``front``: a raw HTTP POST to the front (no boto3, no moto request hook) -> Multi Model Server;
* ``mms``: a raw POST to the container's ``/invocations`` (Multi Model Server, the toolkit's handler,
  ``input_fn`` -> ``predict_fn`` -> ``output_fn``);
* ``predict_fn``: in-process, on the decoded request;
* ``noop``: boto3 to the same stack serving the same files with a handler that does nothing (the floor).

Each difference between neighbours is what that layer adds. Prints medians and the load average;
writes nothing. Usage: python bench/serving_breakdown.py [--stack mms|light] [--rounds 12] [--block 10]
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlparse

from serving_overhead import InProcess, Served, build_artifact, noop_artifact

from workflows.benchmark.payloads import Shape, payload

HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}


def raw_post(host: str, port: int, path: str) -> Callable[[bytes], float]:
    """Milliseconds of one POST over a kept-alive connection (TCP_NODELAY, as the front's own)."""
    connection = http.client.HTTPConnection(host, port, timeout=120)
    connection.connect()
    assert connection.sock is not None
    connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def post(body: bytes) -> float:
        started = time.perf_counter()
        connection.request("POST", path, body=body, headers=HEADERS)
        answer = connection.getresponse()
        answer.read()
        if answer.status != 200:
            raise RuntimeError(f"POST {path} answered {answer.status}")
        return (time.perf_counter() - started) * 1000

    return post


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stack", default="mms", choices=["mms", "light"])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--block", type=int, default=10)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    workdir = Path(tempfile.mkdtemp(prefix="serving-breakdown-"))
    artifact = build_artifact(workdir)
    local = InProcess(artifact)
    served = Served(args.stack, {"bench": artifact, "noop": noop_artifact(artifact, workdir)}, workdir)
    try:
        assert served.engine.sagemaker is not None and served.engine._server is not None
        endpoint = served.engine.sagemaker.endpoints["bench"]
        container = next(iter(endpoint.instances[0].containers.values()))
        front = urlparse(served.engine._server.url)
        paths: dict[str, Callable[[bytes], float]] = {
            "boto3": served.time_ms,
            "front": raw_post(
                front.hostname or "127.0.0.1", front.port or 80, "/endpoints/bench/invocations"
            ),
            "mms": raw_post("127.0.0.1", container.port, "/invocations"),
            "predict_fn": local.time_ms,
            "noop": lambda body: served.time_ms(body, "noop"),
        }
        bodies = [payload(Shape(1, "natural"), seed=0, variant=v) for v in range(8)]
        for body in bodies * 3:
            for call in paths.values():
                call(body)
        samples: dict[str, list[float]] = {name: [] for name in paths}
        load_before = os.getloadavg()[0]
        for round_index in range(args.rounds):
            for name, call in paths.items():
                for i in range(args.block):
                    samples[name].append(call(bodies[(round_index + i) % len(bodies)]))
        load_after = os.getloadavg()[0]
    finally:
        served.close()
    medians = {name: statistics.median(values) for name, values in samples.items()}
    print(
        f"b1 natural, {args.stack}, {len(samples['boto3'])} samples per path, load {load_before:.2f} -> {load_after:.2f}"
    )
    names = [name for name in medians if name != "noop"]
    for name, below in zip(names, [*names[1:], None], strict=True):
        added = f"  (+{medians[name] - medians[below]:.2f} ms over {below})" if below else ""
        print(f"{name:<11} p50 {medians[name]:7.2f} ms{added}")
    above = medians["boto3"] - medians["predict_fn"] - medians["noop"]
    print(
        f"noop        p50 {medians['noop']:7.2f} ms  (the same stack through boto3, a handler that does nothing)"
    )
    print(
        f"served / in-process: {medians['boto3'] / medians['predict_fn']:.3f}; above the no-op floor: {above:.2f} ms"
    )


if __name__ == "__main__":
    main()
