"""What the local SageMaker's serving path costs over calling predict_fn in-process.

The same MiniLM artifact and the same request bodies (the benchmark step's payloads: b1 with
natural texts, b8 padded to 128 tokens) go two ways, in alternating blocks so that load drift
on a shared machine hits both alike:

* served: boto3 ``invoke_endpoint`` -> the local SageMaker's HTTP front -> the container's server
  (Multi Model Server through the HF toolkit, and/or the light server) -> ``input_fn`` ->
  ``predict_fn`` -> ``output_fn``, timed at the client;
* in-process: ``predict_fn`` on the already decoded request, timed alone (the denominator), with
  ``input_fn`` and ``output_fn`` timed beside it;
* the floor: the same stack and bodies through boto3 to a second endpoint whose ``code/inference.py``
  does nothing (same files, same container start). Above the floor = served - in-process - floor: the
  milliseconds the serving code adds beyond what the stack costs by itself.

Medians per shape; ratio = served / in-process. Targets: <= 1.10 at b8 seq 128; at b1 <= 1.5, or within
1 ms of the no-op floor (above the floor <= 1 ms), whichever is higher.
Writes bench/results/serving_overhead.json (flat); ``ratio_*`` are the DLC's stack (MMS) figures
when it ran, else the light server's.

Usage: python bench/serving_overhead.py [--stacks mms,light] [--rounds 12] [--block 10]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
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
        return self.parts_ms(body)[1]

    def parts_ms(self, body: bytes) -> tuple[float, float, float]:
        """Milliseconds of input_fn, predict_fn and output_fn on one body."""
        started = time.perf_counter()
        data = self.module.input_fn(body, "application/json")
        decoded = time.perf_counter()
        prediction = self.module.predict_fn(data, self.model)
        predicted = time.perf_counter()
        self.module.output_fn(prediction, "application/json")
        encoded = time.perf_counter()
        return (decoded - started) * 1000, (predicted - decoded) * 1000, (encoded - predicted) * 1000


NOOP_HANDLER = '''"""A handler that does nothing: what the serving stack costs by itself (bench/serving_overhead.py)."""


def model_fn(model_dir, context=None):
    return {}


def input_fn(input_data, content_type, context=None):
    return None


def predict_fn(data, model, context=None):
    return None


def output_fn(prediction, accept, context=None):
    return "{}"
'''


def noop_artifact(artifact: Path, workdir: Path) -> Path:
    """The same artifact with a no-op code/inference.py: the same stack, container start and files."""
    out = workdir / "artifact-noop"
    if not out.exists():
        shutil.copytree(artifact, out)
        (out / "code" / "inference.py").write_text(NOOP_HANDLER, encoding="utf-8")
    return out


class Served:
    """Real-time endpoints on one local SageMaker, one per artifact, invoked through boto3."""

    def __init__(self, kind: str, artifacts: dict[str, Path], workdir: Path) -> None:
        import boto3
        from botocore.config import Config

        from workflows.local.engine import BUCKET, REGION, LocalEngine
        from workflows.steps.pack_artifact import write_tarball

        self.engine = LocalEngine(workdir=workdir / f"engine-{kind}", serving=kind).__enter__()
        sagemaker = self.engine.client("sagemaker")
        for name, artifact in artifacts.items():
            tarball = workdir / f"{name}.tar.gz"
            if not tarball.exists():
                write_tarball(artifact, tarball, "fast")
            self.engine.client("s3").upload_file(str(tarball), BUCKET, f"bench/{name}.tar.gz")
            environment = {"SAGEMAKER_MODEL_SERVER_WORKERS": "1", "ORT_INTRA_OP_THREADS": "0"}
            sagemaker.create_model(
                ModelName=name,
                ExecutionRoleArn=ROLE,
                PrimaryContainer={
                    "Image": "hf",
                    "ModelDataUrl": f"s3://{BUCKET}/bench/{name}.tar.gz",
                    "Environment": environment,
                },
            )
            variant = {
                "VariantName": "primary",
                "ModelName": name,
                "InstanceType": "ml.c6i.xlarge",
                "InitialInstanceCount": 1,
            }
            sagemaker.create_endpoint_config(EndpointConfigName=name, ProductionVariants=[variant])
            sagemaker.create_endpoint(EndpointName=name, EndpointConfigName=name)
        deadline = time.monotonic() + 900
        for name in artifacts:
            while (status := sagemaker.describe_endpoint(EndpointName=name))["EndpointStatus"] == "Creating":
                if time.monotonic() > deadline:
                    raise TimeoutError("the endpoints did not come up in 15 minutes")
                time.sleep(1)
            if status["EndpointStatus"] != "InService":
                raise RuntimeError(
                    f"{name}: endpoint {status['EndpointStatus']}: {status.get('FailureReason')}"
                )
        self.runtime = boto3.client("sagemaker-runtime", region_name=REGION, config=Config(read_timeout=120))

    def time_ms(self, body: bytes, endpoint: str = "bench") -> float:
        started = time.perf_counter()
        answer = self.runtime.invoke_endpoint(
            EndpointName=endpoint, Body=body, ContentType="application/json", Accept="application/json"
        )
        answer["Body"].read()
        return (time.perf_counter() - started) * 1000

    def close(self) -> None:
        self.engine.__exit__(None, None, None)


def measure(served: Served, local: InProcess, *, rounds: int, block: int) -> dict[str, dict[str, float]]:
    """Alternating blocks of ``block`` calls per path (our handler served, the no-op handler served,
    in-process), ``rounds`` times, per shape; medians."""
    figures: dict[str, dict[str, float]] = {}
    for label, shape in SHAPES.items():
        bodies = [payload(shape, seed=0, variant=v) for v in range(8)]
        for body in bodies * 3:  # warm every path on every body
            served.time_ms(body)
            served.time_ms(body, "noop")
            local.time_ms(body)
        served_ms: list[float] = []
        noop_ms: list[float] = []
        parts: list[tuple[float, float, float]] = []
        for round_index in range(rounds):
            for i in range(block):
                served_ms.append(served.time_ms(bodies[(round_index + i) % len(bodies)]))
            for i in range(block):
                noop_ms.append(served.time_ms(bodies[(round_index + i) % len(bodies)], "noop"))
            for i in range(block):
                parts.append(local.parts_ms(bodies[(round_index + i) % len(bodies)]))
        served_p50, noop_p50 = statistics.median(served_ms), statistics.median(noop_ms)
        inprocess_p50 = statistics.median(p[1] for p in parts)
        overhead = served_p50 - inprocess_p50
        figures[label] = {
            "served_p50_ms": round(served_p50, 3),
            "inprocess_p50_ms": round(inprocess_p50, 3),
            "ratio": round(served_p50 / inprocess_p50, 3),
            # What serving adds per request in ms: the ratio alone grows when predict_fn gets faster.
            "overhead_p50_ms": round(overhead, 3),
            # The floor: the same stack and body with a handler that does nothing.
            "noop_floor_p50_ms": round(noop_p50, 3),
            # Ours above the floor: input_fn, output_fn, the response's size, what our threads cost it.
            "above_floor_ms": round(overhead - noop_p50, 3),
            "input_fn_p50_ms": round(statistics.median(p[0] for p in parts), 3),
            "output_fn_p50_ms": round(statistics.median(p[2] for p in parts), 3),
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
    noop = noop_artifact(artifact, workdir)
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
        served = Served(kind, {"bench": artifact, "noop": noop}, workdir)
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
    # b1: <= 1.5, or within 1 ms of the no-op floor, whichever is higher; b8 x 128: <= 1.10.
    results["goal_b1_natural_met"] = (
        results["ratio_b1_natural"] <= 1.5 or results[f"{headline}_b1_natural_above_floor_ms"] <= 1.0
    )
    results["goal_b8_seq128_met"] = results["ratio_b8_seq128"] <= 1.10
    columns = ("served", "noop floor", "predict_fn", "input_fn", "output_fn", "above floor", "ratio")
    print(f"{'stack':<6} {'shape':<11} " + " ".join(f"{c:>11}" for c in columns) + "   (p50 ms)")
    keys = ("served_p50_ms", "noop_floor_p50_ms", "inprocess_p50_ms", "input_fn_p50_ms")
    keys += ("output_fn_p50_ms", "above_floor_ms", "ratio")
    for kind in measured:
        for label in SHAPES:
            cells = " ".join(f"{results[f'{kind}_{label}_{key}']:>11.3f}" for key in keys)
            print(f"{kind:<6} {label:<11} {cells}")
    print(
        f"goals: b1 ratio <= 1.5 or <= 1 ms above the floor: {results['goal_b1_natural_met']} "
        f"(ratio {results['ratio_b1_natural']}, above floor {results[f'{headline}_b1_natural_above_floor_ms']} ms); "
        f"b8 x 128 ratio <= 1.10: {results['goal_b8_seq128_met']} ({results['ratio_b8_seq128']})"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
