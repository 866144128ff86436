"""deploybench's served artifacts against the container's default deployment, side by side.

For each model, three real-time endpoints on the local SageMaker's container stack (Multi Model
Server through the HF inference toolkit, one worker each, the same instance type and so the same
memory cap, and the same thread count: ``OMP_NUM_THREADS`` and ``ORT_INTRA_OP_THREADS``):

* default: the model folder alone, no ``code/``; the toolkit's own pipeline on the PyTorch model,
  configured by ``HF_TASK`` (feature-extraction, text-classification): what a user gets by
  handing the DLC the model;
* fp32 / int8: deploybench's artifacts, converted as ConvertToOnnx converts (through the
  conversion cache).

Models: the bundled all-MiniLM-L6-v2 and a DeBERTa-v2 NLI classifier with random weights (text
pairs); b1 natural and b8 padded to 128 tokens; concurrency 1 and 4; the three endpoints measured
in alternating blocks per cell. Answers compared on the same texts: embedding cosine (the
default's token vectors mean-pooled over the real tokens, as the artifact pools) and label
agreement; the default's response size next to the artifact's.

Writes bench/results/served_vs_default.json (flat). Usage:
python bench/served_vs_default.py [--seconds 4] [--rounds 3] [--models minilm,deberta]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conversion_support import machine  # noqa: E402
from served_support import pooled, print_table, refused_size  # noqa: E402

from workflows.benchmark.payloads import Shape, payload  # noqa: E402
from workflows.errors import QuantizationCollapsed  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "served_vs_default.json"
ROLE = "arn:aws:iam::123456789012:role/deploybench-local"
SHAPES = {"b1_natural": Shape(1, "natural"), "b8_seq128": Shape(8, 128)}
CONCURRENCY = (1, 4)
VARIANTS = ("default", "default_unlimited", "fp32", "int8")
# The default's embedding answer is every token's vector: at b8 seq128 about 8 MB, which Multi Model
# Server refuses (and SageMaker's InvokeEndpoint caps real-time responses at 6 MB). Where the default
# cannot answer, it is measured once more with the model server's response limit raised, so the
# ratio still compares the compute; the figures say which basis each ratio has.
UNLIMITED_RESPONSE_BYTES = 256 << 20
TASKS = {"minilm": ("embedding", "feature-extraction"), "deberta": ("classification", "text-classification")}


def endpoint_name(name: str, variant: str) -> str:
    """SageMaker endpoint names take letters, digits and hyphens only."""
    return f"{name}-{variant.replace('_', '-')}"


def model_folders(workdir: Path) -> dict[str, Path]:
    from workflows.conversion.random_models import build_random_model
    from workflows.conversion.source import bundled_model_path

    deberta = build_random_model(
        "deberta-v2",
        workdir / "deberta-nli",
        task="classification",
        hidden=384,
        layers=6,
        heads=6,
        # Logits of a trained NLI head's scale: at 1.0 the fp32 export's absolute difference (6e-3)
        # exceeds the parity tolerance although its cosine is 1.0.
        head_std=0.3,
    )
    return {"minilm": bundled_model_path(), "deberta": deberta}


def convert(name: str, source: Path, precision: str, workdir: Path) -> Path:
    """ConvertToOnnx's artifact, through the conversion cache under ~/.cache/deploybench."""
    from workflows.container.environment import cache_root
    from workflows.contracts import StepRequest
    from workflows.conversion.cache import CacheBounds, converted
    from workflows.conversion.cache_stores import LocalStore
    from workflows.spec.pipeline import parse_spec
    from workflows.steps.convert_to_onnx import build_artifact

    spec = parse_spec(
        {
            "name": "served-vs-default",
            "model": {"source": str(source), "task": TASKS[name][0], "max_sequence_length": 256},
            "convert": {"precision": precision},
        }
    )
    out = workdir / f"{name}-{precision}"
    _, outcome = converted(
        StepRequest(run_id="bench", spec=spec),
        source=source,
        out=out,
        build=lambda: build_artifact(
            StepRequest(run_id="bench", spec=spec),
            source=source,
            out=out,
            scratch=workdir / f"{name}-{precision}-scratch",
        ),
        store=LocalStore(cache_root() / "conversions"),
        bounds=CacheBounds(max_bytes=20 << 30, max_age_s=30 * 86400),
    )
    print(f"{name} {precision}: conversion cache {outcome.status}", flush=True)
    return out


def bodies(name: str, shape: Shape, variant: str, count: int = 6) -> list[bytes]:
    """The benchmark step's payloads; NLI as text pairs; the default's padding named as its pipeline reads it."""
    out = []
    for v in range(count):
        data = json.loads(payload(shape, seed=3, variant=v))
        if name == "deberta":
            data["inputs"] = [{"text": t, "text_pair": t[: max(8, len(t) // 3)]} for t in data["inputs"]]
        if variant.startswith("default"):
            parameters = data["parameters"]
            padding = {k: parameters.pop(k) for k in ("padding", "max_length") if k in parameters}
            if padding:
                padding["truncation"] = True
                if name == "minilm":
                    parameters["tokenize_kwargs"] = padding
                else:
                    parameters.update(padding)
        out.append(json.dumps(data).encode())
    return out


class Endpoints:
    """One local SageMaker with an endpoint per variant of one model."""

    def __init__(self, name: str, folders: dict[str, Path], workdir: Path, threads: int) -> None:
        import boto3
        from botocore.config import Config

        from workflows.local.engine import BUCKET, REGION, LocalEngine
        from workflows.steps.pack_artifact import write_tarball

        self.engine = LocalEngine(workdir=workdir / f"engine-{name}", serving="mms").__enter__()
        sagemaker = self.engine.client("sagemaker")
        for variant, folder in folders.items():
            tarball = workdir / f"{name}-{variant}.tar.gz"
            write_tarball(folder, tarball, "fast")
            key = f"bench/{name}-{variant}.tar.gz"
            self.engine.client("s3").upload_file(str(tarball), BUCKET, key)
            environment = {
                "SAGEMAKER_MODEL_SERVER_WORKERS": "1",
                "OMP_NUM_THREADS": str(threads),
                "ORT_INTRA_OP_THREADS": str(threads),
            }
            if variant.startswith("default"):
                environment["HF_TASK"] = TASKS[name][1]
            if variant == "default_unlimited":
                # The toolkit's MMS config sets enable_envvars_config: MMS_<PROPERTY> overrides it.
                environment["MMS_MAX_RESPONSE_SIZE"] = str(UNLIMITED_RESPONSE_BYTES)
            endpoint = endpoint_name(name, variant)
            sagemaker.create_model(
                ModelName=endpoint,
                ExecutionRoleArn=ROLE,
                PrimaryContainer={
                    "Image": "hf",
                    "ModelDataUrl": f"s3://{BUCKET}/{key}",
                    "Environment": environment,
                },
            )
            variant_row = {
                "VariantName": "primary",
                "ModelName": endpoint,
                "InstanceType": "ml.c6i.xlarge",
                "InitialInstanceCount": 1,
            }
            sagemaker.create_endpoint_config(EndpointConfigName=endpoint, ProductionVariants=[variant_row])
            sagemaker.create_endpoint(EndpointName=endpoint, EndpointConfigName=endpoint)
        self.names = [endpoint_name(name, variant) for variant in folders]
        for endpoint in self.names:
            self._wait(sagemaker, endpoint)
        self.runtime = boto3.client(
            "sagemaker-runtime", region_name=REGION, config=Config(read_timeout=300, max_pool_connections=16)
        )

    @staticmethod
    def _wait(sagemaker: Any, endpoint: str) -> None:
        deadline = time.monotonic() + 900
        while (status := sagemaker.describe_endpoint(EndpointName=endpoint))["EndpointStatus"] == "Creating":
            if time.monotonic() > deadline:
                raise TimeoutError(f"{endpoint} did not come up in 15 minutes")
            time.sleep(1)
        if status["EndpointStatus"] != "InService":
            raise RuntimeError(f"{endpoint} {status['EndpointStatus']}: {status.get('FailureReason')}")

    def has(self, endpoint: str) -> bool:
        return endpoint in self.names

    def invoke(self, endpoint: str, body: bytes) -> bytes:
        answer = self.runtime.invoke_endpoint(
            EndpointName=endpoint, Body=body, ContentType="application/json", Accept="application/json"
        )
        return bytes(answer["Body"].read())

    def close(self) -> None:
        self.engine.__exit__(None, None, None)


def block(
    endpoints: Endpoints, endpoint: str, payloads: list[bytes], concurrency: int, seconds: float
) -> list[float]:
    """``concurrency`` clients calling for ``seconds``; each call's latency in ms."""
    latencies: list[float] = []
    lock = threading.Lock()
    stop = time.perf_counter() + seconds

    def client(index: int) -> None:
        n = index
        while time.perf_counter() < stop:
            started = time.perf_counter()
            endpoints.invoke(endpoint, payloads[n % len(payloads)])
            with lock:
                latencies.append((time.perf_counter() - started) * 1000)
            n += concurrency

    workers = [threading.Thread(target=client, args=(i,)) for i in range(concurrency)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return latencies


def measure(endpoints: Endpoints, name: str, *, seconds: float, rounds: int) -> dict[str, Any]:
    import numpy as np

    figures: dict[str, Any] = {}
    for label, shape in SHAPES.items():
        present = [v for v in VARIANTS if endpoints.has(endpoint_name(name, v))]
        payloads = {v: bodies(name, shape, v) for v in present}
        serving = []
        for variant in present:
            if variant == "default_unlimited" and "default" in serving:
                continue  # the default answered this shape as deployed: no second basis needed
            try:
                for body in payloads[variant][:3]:
                    endpoints.invoke(endpoint_name(name, variant), body)
                serving.append(variant)
            except (
                Exception
            ) as error:  # the default cannot answer some shapes at all: say why, measure the rest
                figures[f"{name}_{variant}_{label}_error"] = str(error).splitlines()[0][:300]
                print(f"{name} {variant} {label}: {figures[f'{name}_{variant}_{label}_error']}", flush=True)
        for concurrency in CONCURRENCY:
            walls = dict.fromkeys(serving, 0.0)
            latencies: dict[str, list[float]] = {v: [] for v in serving}
            for _ in range(rounds):
                for variant in serving:
                    started = time.perf_counter()
                    latencies[variant] += block(
                        endpoints, endpoint_name(name, variant), payloads[variant], concurrency, seconds
                    )
                    walls[variant] += time.perf_counter() - started
            for variant in serving:
                cell = f"{name}_{variant}_{label}_c{concurrency}"
                figures[f"{cell}_samples_per_s"] = round(
                    len(latencies[variant]) * shape.batch_size / walls[variant], 2
                )
                figures[f"{cell}_p50_ms"] = round(statistics.median(latencies[variant]), 2)
                figures[f"{cell}_p99_ms"] = round(float(np.percentile(latencies[variant], 99)), 2)
                figures[f"{cell}_calls"] = len(latencies[variant])
            basis = "default" if "default" in serving else "default_unlimited"
            figures[f"{name}_default_basis_{label}"] = basis if basis in serving else None
            for variant in ("fp32", "int8"):
                base = figures.get(f"{name}_{basis}_{label}_c{concurrency}_samples_per_s")
                mine = figures.get(f"{name}_{variant}_{label}_c{concurrency}_samples_per_s")
                ratio = round(mine / base, 3) if base and mine else None  # None: a side could not serve it
                figures[f"{name}_{variant}_vs_default_{label}_c{concurrency}"] = ratio
    return figures


def agreement(endpoints: Endpoints, name: str, source: Path) -> dict[str, Any]:
    """Cosine (embeddings) or label agreement (classifier) of fp32/int8 with the default, same texts."""
    import numpy as np
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(source))
    figures: dict[str, Any] = {}
    for label, shape in SHAPES.items():
        default_bodies, mine_bodies = bodies(name, shape, "default"), bodies(name, shape, "fp32")
        mine_variants = [v for v in ("fp32", "int8") if endpoints.has(endpoint_name(name, v))]
        answers = {
            v: [json.loads(endpoints.invoke(endpoint_name(name, v), b)) for b in mine_bodies]
            for v in mine_variants
        }
        figures[f"{name}_fp32_response_bytes_{label}"] = round(
            statistics.mean(len(json.dumps(a)) for a in answers["fp32"])
        )
        try:
            raw = [endpoints.invoke(endpoint_name(name, "default"), b) for b in default_bodies]
            figures[f"{name}_default_response_bytes_{label}"] = round(statistics.mean(len(r) for r in raw))
        except Exception:
            # The token vectors were computed and refused by the model server for their size.
            figures[f"{name}_default_response_bytes_{label}"] = refused_size(endpoints.engine.workdir, name)
            if not endpoints.has(endpoint_name(name, "default_unlimited")):
                continue
            try:
                raw = [endpoints.invoke(endpoint_name(name, "default_unlimited"), b) for b in default_bodies]
            except Exception as error:  # a limit the model server would not lift: say so, compare the rest
                figures[f"{name}_default_unlimited_{label}_error"] = str(error).splitlines()[0][:300]
                continue
        default = [json.loads(r) for r in raw]
        for variant in mine_variants:
            scores = []
            for body, theirs, mine in zip(mine_bodies, default, answers[variant], strict=True):
                if name == "minilm":
                    texts = json.loads(body)["inputs"]
                    max_length = shape.sequence_length if shape.sequence_length != "natural" else 256
                    lengths = [
                        len(tokenizer(t, truncation=True, max_length=max_length)["input_ids"]) for t in texts
                    ]
                    for a, b in zip(pooled(theirs, lengths), mine["embeddings"], strict=True):
                        a_, b_ = np.asarray(a), np.asarray(b)
                        scores.append(float(a_ @ b_ / (np.linalg.norm(a_) * np.linalg.norm(b_))))
                else:
                    theirs_labels = [t["label"] if isinstance(t, dict) else t[0]["label"] for t in theirs]
                    scores += [
                        float(x == p["label"])
                        for x, p in zip(theirs_labels, mine["predictions"], strict=True)
                    ]
            key = "min_cosine" if name == "minilm" else "label_agreement"
            figures[f"{name}_{variant}_{key}_{label}"] = round(
                min(scores) if name == "minilm" else statistics.mean(scores), 5
            )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=4.0, help="length of one measuring block")
    parser.add_argument("--rounds", type=int, default=3, help="alternating blocks per variant and cell")
    parser.add_argument("--models", default="minilm,deberta")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    threads = os.cpu_count() or 1
    workdir = Path(tempfile.mkdtemp(prefix="served-vs-default-"))
    sources = model_folders(workdir)
    results: dict[str, Any] = {
        **machine(),
        "threads": threads,
        "workers": 1,
        "instance_type": "ml.c6i.xlarge",
    }
    results["load_average_1m_before"] = results.pop("load_average_1m")
    for name in [m.strip() for m in args.models.split(",") if m.strip()]:
        folders = {"default": sources[name]}
        if TASKS[name][0] == "embedding":
            folders["default_unlimited"] = sources[name]
        for precision in ("fp32", "int8"):
            try:
                folders[precision] = convert(name, sources[name], precision, workdir)
            except QuantizationCollapsed as refused:  # the guard's refusal is a result too (F29)
                results[f"{name}_{precision}_refused"] = str(refused)[:300]
                print(f"{name} {precision}: refused: {refused}", flush=True)
        endpoints = Endpoints(name, folders, workdir, threads)
        try:
            results.update(measure(endpoints, name, seconds=args.seconds, rounds=args.rounds))
            results.update(agreement(endpoints, name, sources[name]))
        finally:
            endpoints.close()
        write(results)
    results["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    if "minilm_fp32_vs_default_b8_seq128_c1" in results:
        results["fp32_vs_default_b8_seq128"] = results["minilm_fp32_vs_default_b8_seq128_c1"]
        results["int8_vs_default_b8_seq128"] = results.get("minilm_int8_vs_default_b8_seq128_c1")
        results["fp32_vs_default_b1_natural"] = results["minilm_fp32_vs_default_b1_natural_c1"]
        results["default_basis_b8_seq128"] = results.get("minilm_default_basis_b8_seq128")
        results["min_cosine_vs_default"] = min(v for k, v in results.items() if "_min_cosine_" in k)
        results["min_label_agreement_vs_default"] = min(
            (v for k, v in results.items() if "_label_agreement_" in k), default=None
        )
    print_table(results, models=TASKS, shapes=SHAPES, concurrency=CONCURRENCY, variants=VARIANTS)
    write(results)
    print(f"wrote {RESULTS.relative_to(ROOT)}")


def write(results: dict[str, Any]) -> None:  # after each model too: a later failure keeps the figures
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
