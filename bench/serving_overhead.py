"""What the local SageMaker's serving path costs over calling predict_fn in-process.

The same MiniLM artifact and the same request bodies (the benchmark step's payloads: b1 with
natural texts, b8 padded to 128 tokens) go two ways, in alternating blocks so that load drift
on a shared machine hits both alike:

* served: boto3 ``invoke_endpoint`` -> the local SageMaker's HTTP front -> the container's server
  (Multi Model Server through the HF toolkit, and/or the light server) -> ``input_fn`` ->
  ``predict_fn`` -> ``output_fn``, timed at the client;
* in-process: ``predict_fn`` on the already decoded request, timed alone (the denominator).

Medians per shape; ratio = served / in-process. Targets: <= 1.10 at b8 seq 128, <= 1.5 at b1.
Writes bench/results/serving_overhead.json (flat); ``ratio_*`` are the DLC's stack (MMS) figures
when it ran, else the light server's.

Usage: python bench/serving_overhead.py [--stacks mms,light] [--rounds 12] [--block 10]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workflows.benchmark.payloads import Shape, payload  # noqa: E402
from workflows.container.environment import resolve_serving_stack  # noqa: E402

SHAPES = {"b1_natural": Shape(1, "natural"), "b8_seq128": Shape(8, 128)}
RESULTS = ROOT / "bench" / "results" / "serving_overhead.json"
ROLE = "arn:aws:iam::123456789012:role/deploybench-local"


def build_artifact(workdir: Path) -> Path:
    """The bundled MiniLM, converted and verified exactly as the convert step does."""
    from workflows.contracts import StepRequest
    from workflows.spec.pipeline import parse_spec
    from workflows.steps.convert_to_onnx import build_artifact as convert

    spec = parse_spec(
        {"name": "serving-overhead", "model": {"source": "bundled", "max_sequence_length": 256}}
    )
    from workflows.conversion.source import bundled_model_path

    out = workdir / "artifact"
    convert(
        StepRequest(run_id="bench", spec=spec),
        source=bundled_model_path(),
        out=out,
        scratch=workdir / "scratch",
    )
    return out


class InProcess:
    """The artifact's own serving code, loaded in this process."""

    def __init__(self, artifact: Path) -> None:
        spec = importlib.util.spec_from_file_location("bench_inference", artifact / "code" / "inference.py")
        assert spec is not None and spec.loader is not None
        self.module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.module)
        self.model = self.module.model_fn(str(artifact))

    def time_ms(self, body: bytes) -> float:
        data = self.module.input_fn(body, "application/json")
        started = time.perf_counter()
        self.module.predict_fn(data, self.model)
        return (time.perf_counter() - started) * 1000


class Served:
    """One real-time endpoint on the local SageMaker, invoked through boto3."""

    def __init__(self, kind: str, artifact: Path, workdir: Path) -> None:
        import boto3
        from botocore.config import Config

        from workflows.local.engine import BUCKET, REGION, LocalEngine
        from workflows.steps.pack_artifact import write_tarball

        self.engine = LocalEngine(workdir=workdir / f"engine-{kind}", serving=kind).__enter__()
        tarball = workdir / "model.tar.gz"
        if not tarball.exists():
            write_tarball(artifact, tarball, "fast")
        self.engine.client("s3").upload_file(str(tarball), BUCKET, "bench/model.tar.gz")
        sagemaker = self.engine.client("sagemaker")
        environment = {"SAGEMAKER_MODEL_SERVER_WORKERS": "1", "ORT_INTRA_OP_THREADS": "0"}
        sagemaker.create_model(
            ModelName="bench",
            ExecutionRoleArn=ROLE,
            PrimaryContainer={
                "Image": "hf",
                "ModelDataUrl": f"s3://{BUCKET}/bench/model.tar.gz",
                "Environment": environment,
            },
        )
        variant = {
            "VariantName": "primary",
            "ModelName": "bench",
            "InstanceType": "ml.c6i.xlarge",
            "InitialInstanceCount": 1,
        }
        sagemaker.create_endpoint_config(EndpointConfigName="bench", ProductionVariants=[variant])
        sagemaker.create_endpoint(EndpointName="bench", EndpointConfigName="bench")
        deadline = time.monotonic() + 900
        while (status := sagemaker.describe_endpoint(EndpointName="bench"))["EndpointStatus"] == "Creating":
            if time.monotonic() > deadline:
                raise TimeoutError("the endpoint did not come up in 15 minutes")
            time.sleep(1)
        if status["EndpointStatus"] != "InService":
            raise RuntimeError(f"endpoint {status['EndpointStatus']}: {status.get('FailureReason')}")
        self.runtime = boto3.client("sagemaker-runtime", region_name=REGION, config=Config(read_timeout=120))

    def time_ms(self, body: bytes) -> float:
        started = time.perf_counter()
        answer = self.runtime.invoke_endpoint(
            EndpointName="bench", Body=body, ContentType="application/json", Accept="application/json"
        )
        answer["Body"].read()
        return (time.perf_counter() - started) * 1000

    def close(self) -> None:
        self.engine.__exit__(None, None, None)


def measure(served: Served, local: InProcess, *, rounds: int, block: int) -> dict[str, dict[str, float]]:
    """Alternating blocks of ``block`` calls per path, ``rounds`` times, per shape; medians."""
    figures: dict[str, dict[str, float]] = {}
    for label, shape in SHAPES.items():
        bodies = [payload(shape, seed=0, variant=v) for v in range(8)]
        for body in bodies * 3:  # warm both paths on every body
            served.time_ms(body)
            local.time_ms(body)
        served_ms: list[float] = []
        local_ms: list[float] = []
        for round_index in range(rounds):
            for i in range(block):
                served_ms.append(served.time_ms(bodies[(round_index + i) % len(bodies)]))
            for i in range(block):
                local_ms.append(local.time_ms(bodies[(round_index + i) % len(bodies)]))
        figures[label] = {
            "served_p50_ms": round(statistics.median(served_ms), 3),
            "inprocess_p50_ms": round(statistics.median(local_ms), 3),
            "ratio": round(statistics.median(served_ms) / statistics.median(local_ms), 3),
            # What serving adds per request in ms: the ratio alone grows when predict_fn gets faster.
            "overhead_p50_ms": round(statistics.median(served_ms) - statistics.median(local_ms), 3),
            "samples": len(served_ms),
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stacks", default="mms,light", help="comma-separated: mms, light")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--block", type=int, default=10)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    workdir = Path(tempfile.mkdtemp(prefix="serving-overhead-"))
    artifact = build_artifact(workdir)
    local = InProcess(artifact)
    results: dict[str, Any] = {
        "model": "all-MiniLM-L6-v2 (bundled), fp32 ONNX",
        "workers": 1,
        "cpu_count": os.cpu_count(),
    }
    measured = []
    for kind in [k.strip() for k in args.stacks.split(",") if k.strip()]:
        if kind == "mms" and resolve_serving_stack("auto").kind != "mms":
            print(f"skipping mms: {resolve_serving_stack('auto').reason}")
            continue
        served = Served(kind, artifact, workdir)
        # The host is shared: the load beside each stack's figures says how far other work moved them.
        results[f"{kind}_load_average_1m_before"] = round(os.getloadavg()[0], 2)
        try:
            figures = measure(served, local, rounds=args.rounds, block=args.block)
        finally:
            served.close()
        results[f"{kind}_load_average_1m_after"] = round(os.getloadavg()[0], 2)
        measured.append(kind)
        for label, row in figures.items():
            for key, value in row.items():
                results[f"{kind}_{label}_{key}"] = value
    if not measured:
        raise SystemExit("no serving stack measured")
    headline = "mms" if "mms" in measured else measured[0]
    results["stack_measured"] = headline
    results["stacks"] = ",".join(measured)
    for label in SHAPES:
        results[f"ratio_{label}"] = results[f"{headline}_{label}_ratio"]
    print(f"{'stack':<6} {'shape':<11} {'served p50 ms':>14} {'predict_fn p50 ms':>18} {'ratio':>7}")
    for kind in measured:
        for label in SHAPES:
            print(
                f"{kind:<6} {label:<11} {results[f'{kind}_{label}_served_p50_ms']:>14.2f} "
                f"{results[f'{kind}_{label}_inprocess_p50_ms']:>18.2f} {results[f'{kind}_{label}_ratio']:>7.3f}"
            )
    print(
        f"targets: ratio_b8_seq128 <= 1.10 ({results['ratio_b8_seq128']}), ratio_b1_natural <= 1.5 ({results['ratio_b1_natural']})"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
