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
from workflows.benchmark.run_config import engine_config, make_invoker
from workflows.contracts import BenchmarkRequest, BenchmarkResult
from workflows.hosting import pools
from workflows.naming import results_prefix
from workflows.settings import Settings
from workflows.spec.pipeline import WARM_CHECK_ALLOWANCE_S


def benchmark(
    request: BenchmarkRequest, *, runtime: Any, s3: Any, settings: Settings, sagemaker: Any = None
) -> BenchmarkResult:
    """Measure in this process, write every figure under the run's results prefix.

    A pooled endpoint's instances per type are read before and after the measurement (``sagemaker``
    given): a scale-out onto another pool's type during it makes the figures a mixture.

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
    output = run(invoker, config, runner="lambda")
    fleet = pools.fleet(before, pools.snapshot(sagemaker, name, pooled)) if before is not None else {}
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
    )
