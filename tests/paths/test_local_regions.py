"""A run across Regions on the local engine: F06 in the primary Region past its last instance type, the same
artifact deployed in the next Region of hosting.regions, a router in the primary over both, and nothing left
in either Region once the run is over."""

from __future__ import annotations

from pathlib import Path

import boto3
import pytest

from lambdas import create_inference_router
from tests.conftest import fast_spec, serving_processes
from tests.support.handlers import deployed_on, invoke
from tests.support.local_pipeline import AFTER_IN_SERVICE, BEFORE_DEPLOY, results, run
from tests.support.local_sagemaker import ROLE, container, endpoint_settled, upload_artifact
from tests.support.remediation import WAIT_LOOP, collapse
from workflows.contracts import DeployAttempt, PipelineState, RouterRequest
from workflows.hosting.region_staging import region_bucket
from workflows.local.engine import BUCKET, REGION, LocalEngine
from workflows.local.faults import Fault, FaultPlan
from workflows.naming import staging_prefix, tags

OTHER = "us-west-2"
TIME_SCALE = 200.0

MOVED_TO_THE_NEXT_REGION = [
    *BEFORE_DEPLOY,
    "DeployEndpoint",
    *WAIT_LOOP,
    "DiagnoseFailure",
    "PlanRemediation",
    "ChooseRemediation",
    "RemoveFailedAttempt",
    "DeployEndpoint",
    *WAIT_LOOP,
    "CreateInferenceRouter",
    *AFTER_IN_SERVICE,
]
JOB_LOOP = {"WaitForBenchmarkJob", "DescribeBenchmarkJob", "IsBenchmarkJobDone"}
THROUGH_A_JOB = [
    *MOVED_TO_THE_NEXT_REGION[: MOVED_TO_THE_NEXT_REGION.index("RunBenchmark")],
    "StartBenchmarkJob",
    "CollectBenchmarkResults",
    *MOVED_TO_THE_NEXT_REGION[MOVED_TO_THE_NEXT_REGION.index("RunBenchmark") + 1 :],
]


@pytest.fixture(autouse=True)
def light_server(monkeypatch: pytest.MonkeyPatch) -> None:
    from workflows.container.environment import SERVER_ENV

    monkeypatch.setenv(SERVER_ENV, "light")


@pytest.mark.parametrize(
    ("runner", "expected_states"),
    [("lambda", MOVED_TO_THE_NEXT_REGION), ("processing-job", THROUGH_A_JOB)],
)
def test_a_stall_past_the_last_type_deploys_in_the_next_region_and_routes_there(
    tiny_bert: Path, tmp_path: Path, runner: str, expected_states: list[str]
) -> None:
    # Given no capacity for the only instance type in the primary Region (F06), and a spec that names a
    # second Region, measured by the Lambda runner or by a processing job (which runs in the primary Region)
    plan = FaultPlan(faults=[Fault(id="F06", instance_types=["ml.c6i.xlarge"], regions=[REGION])])
    spec = fast_spec(
        tiny_bert,
        hosting={
            "instance_type_fallbacks": ["ml.c6i.xlarge"],
            "regions": [REGION, OTHER],
            "cross_region": {"max_invocations_per_instance": 40},
        },
        benchmark={"runner": runner},
    )
    run_id = f"regions-{runner}"
    state = PipelineState(run_id=run_id, spec=spec)
    with LocalEngine(workdir=tmp_path / "engine", time_scale=TIME_SCALE, fault_plan=plan) as engine:
        # When the pipeline runs
        outcome = run(engine, state)
        result = results(engine, run_id, tmp_path)
        assert engine.regions is not None
        away = engine.regions.backend(OTHER)
        left = {
            "primary": sorted(
                [*engine.sagemaker.endpoints, *engine.sagemaker.configs, *engine.sagemaker.models]
            ),  # type: ignore[union-attr]
            "other": sorted([*away.endpoints, *away.configs, *away.models]),
            "routers": engine.regions.routers.names(REGION),
            "running": engine.regions.running_containers(),
        }
        s3 = boto3.client("s3", region_name=REGION)
        staged = s3.list_objects_v2(Bucket=region_bucket(BUCKET, OTHER), Prefix=staging_prefix(run_id))
    # Then the stall was diagnosed, the next Region deployed, the router created, and the run succeeded
    assert outcome.status == "SUCCEEDED", outcome.cause
    assert [s for s in collapse(outcome.states) if s not in JOB_LOOP] == expected_states
    assert result["benchmark"]["runner"] == runner
    [stall] = result["attempt"]["history"]
    assert (stall["diagnosis_id"], stall["action"], stall["applied"]) == ("F06", "next_instance_type", True)
    assert {"setting": "region", "before": REGION, "after": OTHER} in stall["changes"]
    assert result["deploy"]["endpoint_name"] == f"db-{run_id}-a2"
    # And the router in the primary lists the stalled primary endpoint first and the serving one second
    assert outcome.output is not None
    router = outcome.output["router"]
    assert (router["name"], router["region"]) == (f"db-{run_id}-router", REGION)
    assert [(d["region"], d["endpoint_name"]) for d in router["destinations"]] == [
        (REGION, f"db-{run_id}-a1"),
        (OTHER, f"db-{run_id}-a2"),
    ]
    assert router["destinations"][1]["arn"].split(":")[3] == OTHER
    # And the routed path was warmed too, on the spec's first shape
    warmed = result["warmup"]["routed"]
    assert (warmed["batch_size"], warmed["sequence_length"]) == (1, "natural")
    assert warmed["successes"] >= 1
    # And result.json names the router and its destinations, and measured the routed shape beside direct
    # InvokeEndpoint: every routed request served by the second Region, the only one with an instance. The
    # runner called the endpoint in its own Region: every measured shape answered
    assert all(m["requests"] > m["errors"] == 0 for m in result["measurements"])
    assert result["router"] == router
    routed = result["benchmark"]["routed"]
    assert (routed["router"], routed["destinations"]) == (
        router["arn"],
        [d["arn"] for d in router["destinations"]],
    )
    assert routed["direct_endpoint"] == f"db-{run_id}-a2"
    assert routed["routed"]["n"] == routed["direct"]["n"] >= 30
    [share] = routed["shares"]
    assert (share["destination"], share["region"], share["share"]) == (
        router["destinations"][1]["arn"],
        OTHER,
        1.0,
    )
    assert share["reasons"] == {"only-healthy": routed["routed"]["n"]}
    assert routed["added_p50_ms"] == round(routed["routed"]["p50_ms"] - routed["direct"]["p50_ms"], 3)
    low, high = routed["added_p50_ci_ms"]
    assert low is not None and high is not None and low <= high
    # And teardown removed the router, both Regions' resources and the staged copy: nothing is left
    deleted = result["teardown"]["deleted"]
    assert deleted[0] == f"inference-router/db-{run_id}-router"
    assert {f"{OTHER}/endpoint/db-{run_id}-a2", f"endpoint/db-{run_id}-a1"} <= set(deleted)
    assert left == {"primary": [], "other": [], "routers": [], "running": []}
    assert staged.get("Contents", []) == []
    assert engine.leaked_endpoints == []
    assert serving_processes() == []


def test_create_inference_router_routes_over_the_runs_latest_endpoint_in_each_region(
    engine: LocalEngine, tiny_artifact: Path, tmp_path: Path
) -> None:
    # Given the run's endpoints: attempt 1 in the primary, attempts 2 and 3 in the second Region, another
    # run's in the primary, and a router the run made for an earlier attempt
    spec = fast_spec(
        "bundled", hosting={"regions": [REGION, OTHER], "cross_region": {"max_invocations_per_instance": 40}}
    )
    uri = upload_artifact(engine, tiny_artifact, "router-handler/model.tar.gz", tmp_path)
    home, away = boto3.client("sagemaker", region_name=REGION), boto3.client("sagemaker", region_name=OTHER)
    arns = {}
    for client, name in (
        (home, "db-h-route-a1"),
        (away, "db-h-route-a2"),
        (away, "db-h-route-a3"),
        (home, "db-x-a1"),
    ):
        client.create_model(ModelName=name, ExecutionRoleArn=ROLE, PrimaryContainer=container(uri))
        variant = {
            "VariantName": "v",
            "ModelName": name,
            "InstanceType": "ml.c6i.xlarge",
            "InitialInstanceCount": 1,
        }
        client.create_endpoint_config(EndpointConfigName=name, ProductionVariants=[variant])
        arns[name] = client.create_endpoint(EndpointName=name, EndpointConfigName=name)["EndpointArn"]
    home.create_inference_router(
        InferenceRouterName="db-h-route-router",
        RoutingTargets=[{"Name": "main", "Destinations": [{"ResourceArn": arns["db-h-route-a1"]}]}],
        Tags=[{"Key": str(t["Key"]), "Value": str(t["Value"])} for t in tags("h-route", spec)],
    )
    deploy = deployed_on("h-route").model_copy(update={"endpoint_name": "db-h-route-a3", "region": OTHER})
    request = RouterRequest(
        run_id="h-route", spec=spec, deploy=deploy, attempt=DeployAttempt(number=3, region_index=1)
    )

    # When CreateInferenceRouter runs
    result = invoke(create_inference_router, request)

    # Then the router replaced the earlier one and routes over the run's latest endpoint of each Region, primary first
    assert [(d["region"], d["endpoint_name"]) for d in result["destinations"]] == [
        (REGION, "db-h-route-a1"),
        (OTHER, "db-h-route-a3"),
    ]
    described = home.describe_inference_router(InferenceRouterName="db-h-route-router")
    [target] = described["RoutingTargets"]
    assert [d["ResourceArn"] for d in target["Destinations"]] == [
        arns["db-h-route-a1"],
        arns["db-h-route-a3"],
    ]
    assert (target["Name"], target["RoutingPreference"]) == (result["routing_target"], "LocalRegionFirst")
    tagged = {t["Key"]: t["Value"] for t in home.list_tags(ResourceArn=result["arn"])["Tags"]}
    assert (tagged["deploybench:run-id"], tagged["deploybench:managed"]) == ("h-route", "true")
    home.delete_inference_router(InferenceRouterName="db-h-route-router")
    for client, name in (
        (home, "db-h-route-a1"),
        (away, "db-h-route-a2"),
        (away, "db-h-route-a3"),
        (home, "db-x-a1"),
    ):
        endpoint_settled(client, name)
        client.delete_endpoint(EndpointName=name)
