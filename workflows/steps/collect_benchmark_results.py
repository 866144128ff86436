"""CollectBenchmarkResults: read the benchmark job's figures into the execution state."""

from __future__ import annotations

import json
from typing import Any

from workflows import clock
from workflows.aws.storage import get_text
from workflows.benchmark.figures import compact, require_answers
from workflows.benchmark.job import OUTPUT_FILE
from workflows.benchmark.results import BenchmarkResult
from workflows.benchmark.routed import figures_of
from workflows.contracts import BenchmarkJobRequest
from workflows.errors import BenchmarkJobFailed
from workflows.hosting import pools


def collect(request: BenchmarkJobRequest, *, s3: Any, sagemaker: Any = None) -> BenchmarkResult:
    """Read the job's output and keep the execution state's share of it, with a pooled endpoint's
    instances per type from the job's start to now (``sagemaker``, the endpoint's Region's, given), and a
    run across Regions' routed shape, its figures made as the Lambda runner makes them.

    Raises:
        BenchmarkFailed: a shape got no successful response at all.
        BenchmarkJobFailed: the run has a router and the job's output has no routed shape.
    """
    if request.job is None:
        raise BenchmarkJobFailed("no benchmark job to collect: StartBenchmarkJob did not record one.")
    detail_uri = f"{request.job.output_uri}{OUTPUT_FILE}"
    output = json.loads(get_text(s3, detail_uri))
    shapes, warm = compact(output)
    require_answers(shapes, f"see {detail_uri}")
    ended = request.job.ended_at or clock.now()
    pooled = request.deploy.instance_pools
    fleet = (
        pools.fleet(request.job.fleet_before, pools.snapshot(sagemaker, request.deploy.endpoint_name, pooled))
        if pooled and sagemaker is not None
        else {}
    )
    router = request.router
    if router is not None and "routed" not in output:
        raise BenchmarkJobFailed(
            f"the run routes through {router.name}, but {detail_uri} has no routed shape."
        )
    routed = (
        figures_of(
            output["routed"],
            router=router.arn,
            destinations=[d.arn for d in router.destinations],
            direct_endpoint=request.deploy.endpoint_name,
        )
        if router is not None
        else None
    )
    return BenchmarkResult(
        runner="processing-job",
        endpoint_url=output["environment"]["endpoint_url"],
        shapes=shapes,
        warm_checks=warm,
        detail_uri=detail_uri,
        seconds=round((ended - request.job.started_at).total_seconds(), 3),
        fleet=fleet,
        routed=routed,
    )
