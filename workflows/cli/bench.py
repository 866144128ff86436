"""The ``deploybench bench`` command (logic in ``workflows.execution.endpoint_benchmark``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workflows.cli.options import JsonOption, ProfileOption, RegionOption
from workflows.cli.output import FAILED, OK, RESULTS_DIR, aws_session, emit, guarded, out, progress


@guarded
def bench(
    endpoint: Annotated[
        str, typer.Option("--endpoint", metavar="NAME", help="Name of an InService SageMaker endpoint.")
    ],
    spec: Annotated[
        Path | None,
        typer.Option(
            "--spec", metavar="SPEC", help="Run spec whose benchmark section to use (flags override it)."
        ),
    ] = None,
    batch_sizes: Annotated[str | None, typer.Option(metavar="LIST", help="Comma list, e.g. 1,8,32.")] = None,
    sequence_lengths: Annotated[
        str | None, typer.Option(metavar="LIST", help="Comma list, e.g. natural,128.")
    ] = None,
    concurrency: Annotated[
        str | None, typer.Option(metavar="LIST", help="Comma list of concurrent clients, e.g. 1,4.")
    ] = None,
    min_duration_s: Annotated[
        float | None, typer.Option(help="Measure each shape at least this long.")
    ] = None,
    max_duration_s: Annotated[
        float | None, typer.Option(help="Stop a shape after this long if not stable.")
    ] = None,
    min_requests: Annotated[int | None, typer.Option(help="...and at least this many requests.")] = None,
    windows: Annotated[
        str | None,
        typer.Option(help="What closes a window: count (the requests p99 needs), time, or auto (both)."),
    ] = None,
    warmup_max_requests: Annotated[
        int | None, typer.Option(help="Warmup gives up on a shape after this.")
    ] = None,
    warmup_max_s: Annotated[
        float | None, typer.Option(help="Warmup gives up on a shape after this long.")
    ] = None,
    warmup_concurrency: Annotated[
        int | None,
        typer.Option(help="Clients during warmup (default: workers × instances, at least max concurrency)."),
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the generated texts.")] = None,
    mode: Annotated[
        str | None, typer.Option(help="Hosting mode (default: read from the endpoint's config).")
    ] = None,
    describe: Annotated[
        bool, typer.Option("--describe/--no-describe", help="Read mode and instances from the endpoint.")
    ] = True,
    instance_type: Annotated[str | None, typer.Option(help="With --no-describe: for the cost.")] = None,
    instance_count: Annotated[int, typer.Option(help="With --no-describe: for the cost.")] = 1,
    variant: Annotated[
        str, typer.Option(help="With --no-describe: variant name for CloudWatch.")
    ] = "AllTraffic",
    inference_component: Annotated[str | None, typer.Option(help="InferenceComponentName to invoke.")] = None,
    target_container: Annotated[str | None, typer.Option(help="TargetContainerHostname to invoke.")] = None,
    results_dir: Annotated[
        Path, typer.Option(metavar="DIR", help="The result folder goes to DIR/bench-<endpoint>-<time>/.")
    ] = RESULTS_DIR,
    cloudwatch_wait_s: Annotated[
        float, typer.Option(help="How long to wait for CloudWatch to publish the endpoint's figures.")
    ] = 180.0,
    region: RegionOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Benchmark an existing endpoint (AWS by default): warm every shape, measure until stable, report."""
    from botocore.config import Config

    from workflows.execution.endpoint_benchmark import bench_endpoint, benchmark_spec, parse_list

    settings = benchmark_spec(
        spec,
        {
            "batch_sizes": parse_list(batch_sizes),
            "sequence_lengths": parse_list(sequence_lengths, allow_natural=True),
            "concurrency": parse_list(concurrency),
            "min_duration_s": min_duration_s,
            "max_duration_s": max_duration_s,
            "min_requests": min_requests,
            "windows": windows,
            "warmup_max_requests": warmup_max_requests,
            "warmup_max_s": warmup_max_s,
            "seed": seed,
        },
    )
    session = aws_session(region, profile)
    standard = Config(retries={"mode": "standard", "max_attempts": 5})
    hosting = None
    if not describe:
        hosting = {
            "mode": mode or "realtime",
            "instance_type": instance_type,
            "instance_count": instance_count,
            "variant": variant,
        }
    target = {
        k: v
        for k, v in {
            "InferenceComponentName": inference_component,
            "TargetContainerHostname": target_container,
        }.items()
        if v
    }
    sagemaker = session.client("sagemaker", config=standard) if describe else None
    if sagemaker is not None and mode:
        from workflows.execution.endpoint_benchmark import describe_hosting

        hosting = {**describe_hosting(sagemaker, endpoint), "mode": mode}
    result, files = bench_endpoint(
        endpoint,
        settings,
        runtime=session.client("sagemaker-runtime"),
        session=session,
        sagemaker=sagemaker,
        cloudwatch=session.client("cloudwatch", config=standard),
        hosting=hosting,
        target=target,
        warmup_concurrency=warmup_concurrency,
        results_dir=results_dir,
        cloudwatch_wait_s=cloudwatch_wait_s,
        progress=lambda line: progress().print(f"  {line}"),
    )
    failed = [m for m in result["measurements"] if m["errors"] == m["requests"]]

    def human() -> None:
        for path in files:
            out.print(f"  wrote {path}")

    summary = {
        "endpoint": endpoint,
        "files": [str(path) for path in files],
        "measurements": len(result["measurements"]),
        "failed_measurements": len(failed),
    }
    emit(summary, as_json=as_json, human=human)
    raise typer.Exit(FAILED if failed else OK)
