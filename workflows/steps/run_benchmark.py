"""RunBenchmark (Lambda runner): warm-check and measure every shape at every concurrency.

The same engine runs in the processing job (``benchmark/job.py``) and in ``deploybench bench``;
what they share lives in ``workflows/benchmark/run_config.py`` and ``workflows/benchmark/figures.py``.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

from workflows.aws.storage import put_text
from workflows.benchmark.engine import run
from workflows.benchmark.figures import DETAIL_FILE, compact, require_answers
from workflows.benchmark.results import BenchmarkResult, Utilisation
from workflows.benchmark.routed import RoutedFigures, figures_of, routed_plan
from workflows.benchmark.routed_calls import measure_routed_shape
from workflows.benchmark.run_config import engine_config, make_invoker
from workflows.contracts import BenchmarkRequest
from workflows.hosting import pools
from workflows.naming import results_prefix
from workflows.processes import groups
from workflows.processes.usage import UsageSampler
from workflows.settings import Settings
from workflows.spec.pipeline import WARM_CHECK_ALLOWANCE_S


def benchmark(
    request: BenchmarkRequest,
    *,
    runtime: Any,
    s3: Any,
    settings: Settings,
    sagemaker: Any = None,
    router_runtime: Any = None,
) -> BenchmarkResult:
    """Measure in this process, write every figure under the run's results prefix.

    A pooled endpoint's instances per type are read before and after the measurement (``sagemaker``
    given): a scale-out onto another pool's type during it makes the figures a mixture. A run across
    Regions (``request.router``) is measured through its router too (``router_runtime``, the primary
    Region's): the routed shape.

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
    pooled, name = request.deploy.instance_pools, request.deploy.endpoint_name
    before = pools.snapshot(sagemaker, name, pooled) if pooled and sagemaker is not None else None
    sampler = local_usage(request.deploy.endpoint_name)
    try:
        output = run(invoker, config, runner="lambda")
    finally:
        if sampler is not None:
            sampler.stop()
    if sampler is not None:
        with_utilisation(output["measurements"], sampler)
    fleet = pools.fleet(before, pools.snapshot(sagemaker, name, pooled)) if before is not None else {}
    routed = routed_shape(request, runtime=runtime, router_runtime=router_runtime) if request.router else None
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
        fleet=fleet,
        routed=routed,
    )


def routed_shape(request: BenchmarkRequest, *, runtime: Any, router_runtime: Any) -> RoutedFigures:
    """The first shape of the spec through the router and directly to the serving endpoint, alternating
    (``workflows.benchmark.routed_calls.measure_routed_shape``, which the processing job runs too).

    Raises:
        ValueError: no router runtime client was given.
    """
    router = request.router
    if router is None or router_runtime is None:
        raise ValueError("measuring the routed shape needs the run's router and the router runtime client")
    plan = routed_plan(
        request.spec.benchmark, router=router.name, routing_target=router.routing_target, region=router.region
    )
    samples = measure_routed_shape(
        plan,
        runtime=runtime,
        router_runtime=router_runtime,
        endpoint_name=request.deploy.endpoint_name,
        target=dict(request.deploy.target),
    )
    return figures_of(
        samples,
        router=router.arn,
        destinations=[d.arn for d in router.destinations],
        direct_endpoint=request.deploy.endpoint_name,
    )


USAGE_INTERVAL_S = 0.25
"""How often the local serving groups are read: several readings in the shortest measurement."""


def local_usage(endpoint_name: str) -> UsageSampler | None:
    """A sampler on the local containers serving the endpoint; None where there are none (AWS).

    On the local engine this step runs in the process that started them, and their groups are
    recorded (``workflows.processes.groups``): their /proc figures stand in for the instance's.
    """
    pgids = groups.serving(endpoint_name)
    return UsageSampler(pgids, interval_s=USAGE_INTERVAL_S).start() if pgids else None


def with_utilisation(measurements: list[dict[str, Any]], sampler: UsageSampler) -> None:
    """Each measurement gets the serving groups' usage over its own kept windows (when read)."""
    for measurement in measurements:
        usage = sampler.window(measurement["started_at"], measurement["ended_at"])
        if usage is not None:
            measurement["utilisation"] = Utilisation(
                source="local",
                cpu_pct=usage.cpu_pct,
                memory_pct=usage.memory_pct,
                started_at=round(usage.started_at, 3),
                ended_at=round(usage.ended_at, 3),
            ).model_dump(mode="json")
