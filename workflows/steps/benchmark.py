"""Benchmark step (Lambda runner): warm-check and measure every shape at every concurrency.

The same engine runs in the processing job (``steps/benchmark_job.py``) and in ``deploybench
bench``; this module also holds what they share: the engine's config from a spec, the client
for a hosting mode, and the compact figures the execution state carries.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from workflows.benchmark.client import Invoker
from workflows.benchmark.engine import EngineConfig, run
from workflows.benchmark.policy import policy_for
from workflows.contracts import BenchmarkRequest, BenchmarkResult, ColdStart, ShapeStats, ShapeWarmup
from workflows.errors import BenchmarkFailed
from workflows.naming import results_prefix
from workflows.settings import Settings
from workflows.spec import WARM_CHECK_ALLOWANCE_S, BenchmarkSpec, RunSpec
from workflows.storage import put_text

if TYPE_CHECKING:
    from types_boto3_s3 import S3Client
    from types_boto3_sagemaker_runtime import SageMakerRuntimeClient

DETAIL_FILE = "benchmark.json"


def warmup_concurrency(benchmark: BenchmarkSpec, *, workers: int, instances: int) -> int:
    """Clients during warmup: every worker of every instance gets requests (F33), and at least the
    highest concurrency measured (each concurrent serverless request may land on a cold instance)."""
    return max(workers * instances, max(benchmark.concurrency))


def config_for(
    benchmark: BenchmarkSpec,
    *,
    endpoint_name: str,
    mode: str,
    warmup_clients: int,
    target: dict[str, str] | None = None,
) -> EngineConfig:
    """The engine's settings from a spec's benchmark section."""
    return EngineConfig(
        endpoint_name=endpoint_name,
        mode=mode,
        batch_sizes=list(benchmark.batch_sizes),
        sequence_lengths=list(benchmark.sequence_lengths),
        concurrency=list(benchmark.concurrency),
        min_duration_s=benchmark.min_duration_s,
        min_requests=benchmark.min_requests,
        max_duration_s=benchmark.max_duration_s,
        warmup_max_requests=benchmark.warmup_max_requests,
        warmup_max_s=benchmark.warmup_max_s,
        warmup_concurrency=warmup_clients,
        seed=benchmark.seed,
        target=dict(target or {}),
    )


def concurrency_limit(spec: RunSpec) -> int | None:
    """The most concurrent clients the hosting takes without refusing or queueing past its cores:
    serverless ``max_concurrency`` (beyond it calls are throttled), else the vCPUs of the smallest
    listed instance type times the instance count; None when the instance table does not list one."""
    from workflows.preflight.instances import instance

    hosting = spec.hosting
    serverless = getattr(hosting, "max_concurrency", None)
    if serverless:
        return int(serverless)
    rows = [instance(name) for name in getattr(hosting, "instance_type_fallbacks", None) or []]
    vcpus = [row.vcpus for row in rows if row is not None]
    return min(vcpus) * int(getattr(hosting, "instance_count", 1)) if vcpus else None


def measured_concurrency(spec: RunSpec) -> list[int]:
    """The concurrency levels to measure: the spec's when it sets them; the default (1 and 4, so
    throughput has a curve) capped at what the hosting takes (a 2-vCPU type measures 1 and 2)."""
    levels = list(spec.benchmark.concurrency)
    if "concurrency" in spec.benchmark.model_fields_set:
        return levels
    limit = concurrency_limit(spec)
    if limit is None:
        return levels
    return sorted({min(level, limit) for level in levels})


def engine_config(spec: RunSpec, endpoint_name: str, target: dict[str, str] | None = None) -> EngineConfig:
    """The engine's settings for a pipeline run's endpoint; ``target`` reaches the run's own model
    on a shared endpoint (DeployResult.target: InferenceComponentName, TargetContainerHostname)."""
    hosting = spec.hosting
    benchmark = spec.benchmark.model_copy(update={"concurrency": measured_concurrency(spec)})
    clients = warmup_concurrency(
        benchmark,
        workers=int(getattr(hosting, "workers", 1)),
        instances=int(getattr(hosting, "instance_count", 1)),
    )
    return config_for(
        benchmark, endpoint_name=endpoint_name, mode=hosting.mode, warmup_clients=clients, target=target
    )


def make_invoker(
    runtime: SageMakerRuntimeClient, config: EngineConfig, *, time_budget_s: float | None = None
) -> Invoker:
    """The client for the endpoint under the hosting mode's policy (timeouts, retries); retries of
    one request never outlast ``time_budget_s`` (a Lambda's remaining time)."""
    policy = policy_for(config.mode)
    if time_budget_s is not None:
        policy = replace(policy, retry_budget_s=max(0.0, min(policy.retry_budget_s, time_budget_s)))
    return Invoker.from_client(runtime, config.endpoint_name, policy=policy, target=config.target)


def warmup_record(data: dict[str, Any]) -> ShapeWarmup:
    """A shape's warmup as the execution state carries it (window medians stay in the detail)."""
    return ShapeWarmup(**{k: v for k, v in data.items() if k in ShapeWarmup.model_fields})


def cold_start_of(shape_label: str, warm: dict[str, Any]) -> ColdStart:
    """The first request of a warmup, which went to a cold shape (or a cold endpoint)."""
    return ColdStart(
        shape=shape_label,
        latency_ms=warm["first_ms"],
        error=warm["first_error"],
        retries=warm["first_retries"],
        time_to_first_success_s=warm["time_to_first_success_s"],
    )


def compact(output: dict[str, Any]) -> tuple[list[ShapeStats], list[ShapeWarmup]]:
    """The execution state's share of an engine output: figures without windows and samples."""
    shapes = [
        ShapeStats(**{k: v for k, v in m.items() if k in ShapeStats.model_fields})
        for m in output["measurements"]
    ]
    return shapes, [warmup_record(w) for w in output["warm_checks"]]


def require_answers(shapes: list[ShapeStats], where: str) -> None:
    """Raises BenchmarkFailed when a measurement got no successful response at all."""
    for s in shapes:
        if s.requests == 0 or s.errors == s.requests:
            raise BenchmarkFailed(
                f"every request for b{s.batch_size}/{s.sequence_length} at concurrency {s.concurrency} "
                f"failed ({where}): {s.errors_by_kind or 'no request completed'}."
            )


def benchmark(
    request: BenchmarkRequest, *, runtime: SageMakerRuntimeClient, s3: S3Client, settings: Settings
) -> BenchmarkResult:
    """Measure in this process, write every figure under the run's results prefix.

    Raises:
        BenchmarkFailed: a shape got no successful response at all.
    """
    started = time.perf_counter()
    # WarmUpShapes warmed every shape already: the check before measuring gets the time the plan
    # allowed it, so the measurement fits the Lambda's 15 minutes as planned.
    config = replace(
        engine_config(request.spec, request.deploy.endpoint_name, request.deploy.target),
        warmup_max_s=min(request.spec.benchmark.warmup_max_s, WARM_CHECK_ALLOWANCE_S),
    )
    invoker = make_invoker(runtime, config)
    output = run(invoker, config, runner="lambda")
    detail_uri = f"s3://{settings.bucket}/{results_prefix(request.run_id)}{DETAIL_FILE}"
    put_text(s3, detail_uri, json.dumps(output), "application/json")
    shapes, warm = compact(output)
    require_answers(shapes, f"see {detail_uri}")
    return BenchmarkResult(
        runner="lambda",
        endpoint_url=invoker.endpoint_url,
        shapes=shapes,
        warm_checks=warm,
        detail_uri=detail_uri,
        seconds=round(time.perf_counter() - started, 3),
    )
