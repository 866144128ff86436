"""The engine's settings and client for a run: shared by RunBenchmark, WarmUpShapes, the processing
job's start (StartBenchmarkJob) and ``deploybench bench``."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from workflows.benchmark.client import Invoker
from workflows.benchmark.engine import EngineConfig
from workflows.benchmark.policy import policy_for
from workflows.spec.pipeline import BenchmarkSpec, RunSpec

if TYPE_CHECKING:
    from types_boto3_sagemaker_runtime import SageMakerRuntimeClient


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
        windows=benchmark.windows,
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
