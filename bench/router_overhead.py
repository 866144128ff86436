"""The routed shape on the local SageMaker: what its inference router adds to direct InvokeEndpoint.

Two local Regions, the bundled MiniLM deployed in each (the light server), F06 planned in the primary
(us-east-1) so that its endpoint stalls in Creating and the router there serves from us-west-2. The
same b1 request goes two ways, one call each per round, the order alternating
(``workflows.benchmark.routed.measure_routed``): directly to the us-west-2 endpoint
(``InvokeEndpoint``), and through the primary's router (``InvokeInferenceRouter``, reason and
destination read from the response). Reported: each side's p50/p99 with n and 95% intervals, the
router's added p50/p99 with a conservative interval, each destination's share and reasons, the CPU,
its flags and the load average. These are the local router's figures (an in-process hop), not AWS's:
AWS's router adds its own network hop between Regions.

Writes bench/results/router_overhead.json (one flat object).

Usage: python bench/router_overhead.py [--rounds 400]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.peers_timing import cpu_flags, cpu_model  # noqa: E402
from bench.serving_overhead import build_artifact  # noqa: E402
from workflows.benchmark.payloads import Shape, payload  # noqa: E402
from workflows.benchmark.routed import routed_figures  # noqa: E402
from workflows.benchmark.routed_calls import measure_routed  # noqa: E402

RESULT = ROOT / "bench" / "results" / "router_overhead.json"
ROLE = "arn:aws:iam::123456789012:role/deploybench-local"
OTHER = "us-west-2"
CAP = {"MaxInvocationsPerSecondPerInstance": 1000, "MaxCrossRegionPercentPerEndpoint": 100}


def client(service: str, region: str) -> Any:
    import boto3
    from botocore.config import Config

    config = Config(read_timeout=120, retries={"total_max_attempts": 1, "mode": "standard"})
    return boto3.client(service, region_name=region, config=config)  # type: ignore[call-overload]


def deploy(region: str, tarball: Path) -> str:
    """The endpoint ``bench`` in ``region``, its model data in a bucket of that Region; its ARN."""
    bucket = f"bench-{region}"
    location = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
    s3 = client("s3", region)
    s3.create_bucket(Bucket=bucket, **location)
    s3.upload_file(str(tarball), bucket, "model.tar.gz")
    sagemaker = client("sagemaker", region)
    environment = {"SAGEMAKER_MODEL_SERVER_WORKERS": "1", "ORT_INTRA_OP_THREADS": "0"}
    container = {"Image": "hf", "ModelDataUrl": f"s3://{bucket}/model.tar.gz", "Environment": environment}
    sagemaker.create_model(ModelName="bench", ExecutionRoleArn=ROLE, PrimaryContainer=container)
    variant = {
        "VariantName": "primary",
        "ModelName": "bench",
        "InstanceType": "ml.c6i.xlarge",
        "InitialInstanceCount": 1,
    }
    sagemaker.create_endpoint_config(
        EndpointConfigName="bench", ProductionVariants=[variant], CrossRegionTrafficConfig=CAP
    )
    return str(sagemaker.create_endpoint(EndpointName="bench", EndpointConfigName="bench")["EndpointArn"])


def in_service(region: str) -> None:
    sagemaker = client("sagemaker", region)
    deadline = time.monotonic() + 600
    while (status := sagemaker.describe_endpoint(EndpointName="bench")["EndpointStatus"]) == "Creating":
        if time.monotonic() > deadline:
            raise TimeoutError(f"the {region} endpoint did not come up in 10 minutes")
        time.sleep(1)
    if status != "InService":
        raise RuntimeError(f"the {region} endpoint is {status}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=400, help="calls each way (299 bound p99 from above)")
    args = parser.parse_args()

    from workflows.local.engine import REGION, LocalEngine
    from workflows.local.faults import Fault, FaultPlan
    from workflows.steps.pack_artifact import write_tarball

    workdir = Path(tempfile.mkdtemp(prefix="router-overhead-"))
    artifact = build_artifact(workdir)
    tarball = workdir / "model.tar.gz"
    write_tarball(artifact, tarball, "fast")
    plan = FaultPlan(faults=[Fault(id="F06", instance_types=["ml.c6i.xlarge"], regions=[REGION])])
    with LocalEngine(workdir=workdir / "engine", serving="light", fault_plan=plan):
        arns = [deploy(REGION, tarball), deploy(OTHER, tarball)]
        in_service(OTHER)
        client("sagemaker", REGION).create_inference_router(
            InferenceRouterName="bench",
            RoutingTargets=[{"Name": "main", "Destinations": [{"ResourceArn": a} for a in arns]}],
        )
        router = client("sagemaker", REGION).describe_inference_router(InferenceRouterName="bench")
        body = payload(Shape(1, "natural"), seed=0)
        runtime = client("sagemaker-runtime", OTHER)
        routing = client("sagemaker-inference-router-runtime", REGION)

        def direct() -> object:
            answer = runtime.invoke_endpoint(EndpointName="bench", Body=body, ContentType="application/json")
            return answer["Body"].read()

        def routed() -> tuple[str, str]:
            answer = routing.invoke_inference_router(
                InferenceRouterName="bench",
                RoutingTargetName="main",
                Body=body,
                ContentType="application/json",
            )
            answer["Body"].read()
            return answer["InvokedRoutedResourceArn"], answer["RoutingReason"]

        measure_routed(direct, routed, 20)  # warm both paths (connections, the model's first calls)
        load_before = os.getloadavg()[0]
        direct_ms, calls = measure_routed(direct, routed, args.rounds)
        load_after = os.getloadavg()[0]
    figures = routed_figures(
        router=router["InferenceRouterArn"],
        destinations=arns,
        direct_endpoint=arns[1],
        direct_ms=direct_ms,
        routed=calls,
    )
    flat: dict[str, Any] = {
        "what": "local inference router vs direct InvokeEndpoint, b1 natural, light server, F06 in the primary",
        "rounds": args.rounds,
        "direct_n": figures.direct.n,
        "direct_p50_ms": figures.direct.p50_ms,
        "direct_p50_ci_ms": figures.direct.p50_ci_ms,
        "direct_p99_ms": figures.direct.p99_ms,
        "direct_p99_ci_ms": figures.direct.p99_ci_ms,
        "routed_n": figures.routed.n,
        "routed_p50_ms": figures.routed.p50_ms,
        "routed_p50_ci_ms": figures.routed.p50_ci_ms,
        "routed_p99_ms": figures.routed.p99_ms,
        "routed_p99_ci_ms": figures.routed.p99_ci_ms,
        "added_p50_ms": figures.added_p50_ms,
        "added_p50_ci_ms": figures.added_p50_ci_ms,
        "added_p99_ms": figures.added_p99_ms,
        "added_p99_ci_ms": figures.added_p99_ci_ms,
        **{f"share_{s.region}": s.share for s in figures.shares},
        **{
            f"reasons_{s.region}": ", ".join(f"{k}: {v}" for k, v in s.reasons.items())
            for s in figures.shares
        },
        "cpu": cpu_model(),
        "cpu_flags": cpu_flags(),
        "load_average_before": round(load_before, 2),
        "load_average_after": round(load_after, 2),
    }
    print(f"{'way':<8} {'n':>5} {'p50 ms':>8} {'p50 95% CI':>18} {'p99 ms':>8} {'p99 95% CI':>18}")
    for name, side in (("direct", figures.direct), ("routed", figures.routed)):
        print(
            f"{name:<8} {side.n:>5} {side.p50_ms:>8} {str(side.p50_ci_ms):>18} {side.p99_ms:>8} {str(side.p99_ci_ms):>18}"
        )
    print(
        f"added    p50 {figures.added_p50_ms} ms {figures.added_p50_ci_ms}, p99 {figures.added_p99_ms} ms {figures.added_p99_ci_ms}"
    )
    for share in figures.shares:
        print(f"served   {share.destination}: {share.share:.0%} {share.reasons}")
    print(f"load average {load_before:.2f} -> {load_after:.2f}; {flat['cpu']}")
    RESULT.write_text(json.dumps(flat, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
