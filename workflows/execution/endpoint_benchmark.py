"""``deploybench bench``: the benchmark engine against an existing endpoint (AWS by default).

The endpoint's hosting mode decides the client policy (timeouts, retries); it is read from the
endpoint's config (ServerlessConfig → serverless, MinInstanceCount 0 → scale-to-zero, a variant
without a model → inference components, else real-time) unless given. Results land in a local
folder: result.json (schema 2), report.md and plots.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from workflows.aws.clients import aws_errors, is_not_found
from workflows.benchmark.client import Invoker
from workflows.benchmark.cloudwatch import endpoint_metrics, with_cloudwatch_view
from workflows.benchmark.engine import run
from workflows.benchmark.figures import WarmupOutcome, cold_start_of, compact
from workflows.benchmark.policy import POLICIES, policy_for
from workflows.benchmark.run_config import config_for
from workflows.benchmark.run_config import warmup_concurrency as default_warmup_clients
from workflows.benchmark.server_side import served_by_sagemaker
from workflows.errors import DeployRejected, SpecInvalid
from workflows.hosting.pools import pool_counts, served_types
from workflows.reports.files import write_report
from workflows.reports.result import bench_result
from workflows.spec.pipeline import BenchmarkSpec

if TYPE_CHECKING:
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_sagemaker import SageMakerClient
    from types_boto3_sagemaker_runtime import SageMakerRuntimeClient

DEFAULT_VARIANT = "AllTraffic"
CLOUDWATCH_POLL_S = 20.0


def describe_hosting(sagemaker: SageMakerClient, endpoint_name: str) -> dict[str, Any]:
    """Mode, instance type and count, variant and workers of an InService endpoint.

    Raises:
        SpecInvalid: the endpoint does not exist or is not InService.
    """
    try:
        endpoint = sagemaker.describe_endpoint(EndpointName=endpoint_name)
    except ClientError as error:
        if is_not_found(error):
            raise SpecInvalid(
                f"endpoint {endpoint_name} does not exist in this account and region.",
                fix="check --endpoint and the AWS region (AWS_REGION / --region)",
            ) from None
        raise
    if endpoint["EndpointStatus"] != "InService":
        raise SpecInvalid(
            f"endpoint {endpoint_name} is {endpoint['EndpointStatus']}; a benchmark needs InService.",
            fix="wait until it is InService",
        )
    with aws_errors(f"describe endpoint config {endpoint['EndpointConfigName']}"):
        config = sagemaker.describe_endpoint_config(EndpointConfigName=endpoint["EndpointConfigName"])
    variant = config["ProductionVariants"][0]
    live_variants = endpoint.get("ProductionVariants") or []
    live_count = live_variants[0].get("CurrentInstanceCount") if live_variants else None
    hosting: dict[str, Any] = {
        "variant": variant.get("VariantName", DEFAULT_VARIANT),
        "instance_type": variant.get("InstanceType"),
        "instance_count": live_count or variant.get("InitialInstanceCount") or 1,
    }
    pooled = [
        str(p["InstanceType"])
        for p in sorted(variant.get("InstancePools") or [], key=lambda p: p["Priority"])
    ]
    if pooled:
        # A pooled variant has no one InstanceType: the types holding instances are what is measured.
        served = served_types(pool_counts(dict(endpoint), pooled))
        hosting.update(
            instance_type=next(iter(served)) if len(served) == 1 else pooled[0], instance_pools=pooled
        )
        hosting.update(served_instance_types=served, mixed_fleet=len(served) > 1)
    if variant.get("ServerlessConfig"):
        hosting.update(mode="serverless", memory_size_mb=variant["ServerlessConfig"].get("MemorySizeInMB"))
    elif (variant.get("ManagedInstanceScaling") or {}).get("MinInstanceCount") == 0:
        hosting["mode"] = "scale-to-zero"
    elif not variant.get("ModelName"):
        hosting["mode"] = "inference-component"
    else:
        hosting["mode"] = "realtime"
        hosting["workers"] = _workers(sagemaker, variant["ModelName"])
    return hosting


def _workers(sagemaker: SageMakerClient, model_name: str) -> int:
    """SAGEMAKER_MODEL_SERVER_WORKERS of the model (1 when unset or unreadable)."""
    try:
        model = sagemaker.describe_model(ModelName=model_name)
    except ClientError:
        return 1
    container = model.get("PrimaryContainer") or (model.get("Containers") or [{}])[0]
    value = (container.get("Environment") or {}).get("SAGEMAKER_MODEL_SERVER_WORKERS", "1")
    return int(value) if str(value).isdigit() else 1


def wait_for_cloudwatch(
    fetch: Callable[[], dict[str, Any]], *, wait_s: float, sleep: Callable[[float], None] = time.sleep
) -> dict[str, Any]:
    """Fetch until the last measurement's invocations are published or ``wait_s`` passes."""
    deadline = time.monotonic() + wait_s
    while True:
        figures = fetch()
        last = (figures.get("shapes") or [{}])[-1]
        published = last.get("cloudwatch_invocations") or 0
        if not figures.get("available") or published >= 0.9 * last.get("client_requests", 0):
            return figures
        if time.monotonic() >= deadline:
            figures["reason"] = f"published only partly after waiting {wait_s:.0f} s"
            return figures
        sleep(CLOUDWATCH_POLL_S)


def bench_endpoint(
    endpoint_name: str,
    benchmark: BenchmarkSpec,
    *,
    runtime: SageMakerRuntimeClient,
    sagemaker: SageMakerClient | None,
    cloudwatch: CloudWatchClient | None,
    session: Any | None = None,
    hosting: dict[str, Any] | None = None,
    target: dict[str, str] | None = None,
    warmup_concurrency: int | None = None,
    results_dir: Path,
    cloudwatch_wait_s: float = 180.0,
    progress: Callable[[str], None] = lambda line: None,
) -> tuple[dict[str, Any], list[Path]]:
    """Warm, measure, fetch CloudWatch figures, and write the result folder.

    ``hosting`` (mode, instance type, ...) is read from the endpoint through ``sagemaker`` when not
    given; ``session``, the one ``runtime`` was made from, signs the requests (None: the default
    credential chain). Returns the result and the files written.
    """
    if hosting:
        hosting = dict(hosting)
    elif sagemaker is not None:
        hosting = describe_hosting(sagemaker, endpoint_name)
    else:
        raise ValueError("bench_endpoint needs the endpoint's hosting or a SageMaker client to read it with")
    if hosting.get("mode") not in POLICIES:
        raise SpecInvalid(
            f"hosting mode {hosting.get('mode')!r} is unknown.", fix=f"use one of {sorted(POLICIES)}"
        )
    config = config_for(
        benchmark,
        endpoint_name=endpoint_name,
        mode=hosting["mode"],
        warmup_clients=warmup_concurrency
        or default_warmup_clients(
            benchmark,
            workers=int(hosting.get("workers") or 1),
            instances=int(hosting.get("instance_count") or 1),
        ),
        target=target,
    )
    try:
        invoker = Invoker.from_client(
            runtime, endpoint_name, policy=policy_for(config.mode), target=config.target, session=session
        )
    except ValueError as error:
        raise DeployRejected(str(error)) from None
    output = run(invoker, config, runner="cli", progress=progress)
    _, warm = compact(output)
    first = output["warm_checks"][0] if output["warm_checks"] else None
    warmup = {
        "shapes": [w.model_dump(mode="json") for w in warm],
        "cold_start": None
        if first is None
        else cold_start_of(
            f"b{first['batch_size']}/{first['sequence_length']}", WarmupOutcome.of(first)
        ).model_dump(mode="json"),
        "seconds": round(sum(w.seconds for w in warm), 3),
    }

    def fetch() -> dict[str, Any]:
        return endpoint_metrics(
            cloudwatch,
            endpoint_url=invoker.endpoint_url,
            endpoint_name=endpoint_name,
            variant_name=hosting.get("variant", DEFAULT_VARIANT),
            measurements=output["measurements"],
            inference_component=config.target.get("InferenceComponentName"),
            instance_type=None if hosting.get("mode") == "serverless" else hosting.get("instance_type"),
        )

    if served_by_sagemaker(invoker.endpoint_url) and cloudwatch is not None:
        progress(f"waiting up to {cloudwatch_wait_s:.0f} s for CloudWatch to publish the endpoint's figures")
        figures = wait_for_cloudwatch(fetch, wait_s=cloudwatch_wait_s)
    else:
        figures = fetch()
    with_cloudwatch_view(output["measurements"], figures)
    run_id = f"bench-{endpoint_name}-{datetime.now(UTC):%Y%m%d-%H%M%S}"
    result = bench_result(
        output,
        run_id=run_id,
        benchmark_spec=benchmark.model_dump(mode="json"),
        hosting={k: v for k, v in hosting.items() if k != "variant"},
        warmup=warmup,
        cloudwatch=figures,
    )
    return result, write_report([result], results_dir / run_id, with_result=True)


def parse_list(text: str | None, *, allow_natural: bool = False) -> list[Any] | None:
    if text is None:
        return None
    items: list[Any] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        items.append(part if allow_natural and part == "natural" else int(part) if part.isdigit() else part)
    return items


def benchmark_spec(spec_path: Path | None, overrides: dict[str, Any]) -> BenchmarkSpec:
    """The benchmark section of a run spec (or the defaults), with command-line overrides.

    Raises:
        SpecInvalid: naming each bad field and its fix.
    """
    from pydantic import ValidationError

    from workflows.spec.pipeline import explain, load_spec

    base = load_spec(spec_path).benchmark if spec_path else BenchmarkSpec()
    data = {**base.model_dump(), **{k: v for k, v in overrides.items() if v is not None}}
    try:
        return BenchmarkSpec.model_validate(data)
    except ValidationError as error:
        raise SpecInvalid(f"benchmark settings are invalid:\n{explain(error, BenchmarkSpec)}") from None
