"""The local SageMaker's Regions and its inference router: each Region holds its own endpoints, and a
router in the first serves from the second when the first has no capacity (F06), answering in
botocore's shapes with the destination that served and why."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.conftest import fast_spec, serving_processes
from tests.support.local_sagemaker import ONE_TEXT, ROLE, container, endpoint_settled, wait_for
from tests.support.shapes import operation_problems
from workflows import naming
from workflows.artifact.tarball import write_tarball
from workflows.contracts import PipelineState
from workflows.hosting.regions import create_router_request
from workflows.local.engine import BUCKET, REGION, LocalEngine
from workflows.local.faults import Fault, FaultPlan
from workflows.settings import Settings
from workflows.steps.teardown_endpoint import teardown

OTHER = "us-west-2"
CAP = {"MaxInvocationsPerSecondPerInstance": 40, "MaxCrossRegionPercentPerEndpoint": 50}


@pytest.fixture
def stalled_primary(tmp_path: Path) -> Iterator[LocalEngine]:
    """The engine with F06 on ml.c6i.xlarge in its own Region only."""
    plan = FaultPlan(faults=[Fault(id="F06", instance_types=["ml.c6i.xlarge"], regions=[REGION])])
    with LocalEngine(workdir=tmp_path / "engine", serving="light", fault_plan=plan) as running:
        yield running
    assert serving_processes() == []


def regional(service: str, region: str) -> Any:
    retries = {"total_max_attempts": 1, "mode": "standard"}
    return boto3.client(service, region_name=region, config=Config(retries=retries))  # type: ignore[call-overload]


def staged(folder: Path, region: str, tmp_path: Path) -> str:
    """The artifact in a bucket of ``region`` (model data must be in the endpoint's Region)."""
    bucket = f"deploybench-local-{region}"
    s3 = regional("s3", region)
    location = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
    s3.create_bucket(Bucket=bucket, **location)
    tarball = tmp_path / f"{region}.tar.gz"
    write_tarball(folder, tarball, "fast")
    s3.upload_file(str(tarball), bucket, "router/model.tar.gz")
    return f"s3://{bucket}/router/model.tar.gz"


def deployed(sagemaker: Any, uri: str) -> str:
    sagemaker.create_model(ModelName="ep", ExecutionRoleArn=ROLE, PrimaryContainer=container(uri))
    variant = {
        "VariantName": "primary",
        "ModelName": "ep",
        "InstanceType": "ml.c6i.xlarge",
        "InitialInstanceCount": 1,
    }
    sagemaker.create_endpoint_config(
        EndpointConfigName="ep", ProductionVariants=[variant], CrossRegionTrafficConfig=CAP
    )
    return str(sagemaker.create_endpoint(EndpointName="ep", EndpointConfigName="ep")["EndpointArn"])


def test_a_router_in_a_stalled_region_serves_from_the_other_and_says_why(
    stalled_primary: LocalEngine, tiny_artifact: Path, tmp_path: Path
) -> None:
    # Given the same artifact deployed in both Regions, each from a bucket of its own Region
    home, away = regional("sagemaker", REGION), regional("sagemaker", OTHER)
    arns = [
        deployed(home, staged(tiny_artifact, REGION, tmp_path)),
        deployed(away, staged(tiny_artifact, OTHER, tmp_path)),
    ]
    # Then each Region holds its own endpoint: the primary's stalls (F06), the other's comes up
    assert endpoint_settled(away, "ep")[-1]["EndpointStatus"] == "InService"
    assert home.describe_endpoint(EndpointName="ep")["EndpointStatus"] == "Creating"
    assert [e["EndpointArn"] for e in away.list_endpoints()["Endpoints"]] == [arns[1]]
    assert [arn.split(":")[3] for arn in arns] == [REGION, OTHER]

    # When a router in the primary Region is created over both
    request = {
        "InferenceRouterName": "router",
        "RoutingTargets": [
            {
                "Name": "main",
                "Destinations": [{"ResourceArn": a} for a in arns],
                "RoutingPreference": "LocalRegionFirst",
            }
        ],
        "Tags": [{"Key": "deploybench:run", "Value": "router-test"}],
    }
    created = home.create_inference_router(**request)
    described = home.describe_inference_router(InferenceRouterName="router")
    # Then its answers fit botocore's output shapes, and its destinations' routing status is each endpoint's
    assert operation_problems(home, "create_inference_router", created) == []
    assert operation_problems(home, "describe_inference_router", described) == []
    statuses = [d["RoutingStatus"] for d in described["RoutingTargets"][0]["Destinations"]]
    assert (described["Status"], statuses) == ("InService", ["Unknown", "Routable"])
    assert home.list_tags(ResourceArn=created["InferenceRouterArn"])["Tags"] == request["Tags"]
    assert away.list_inference_routers()["InferenceRouters"] == []

    # When the router is invoked
    router = regional("sagemaker-inference-router-runtime", REGION)
    answer = router.invoke_inference_router(
        InferenceRouterName="router", RoutingTargetName="main", Body=ONE_TEXT, ContentType="application/json"
    )
    body = answer["Body"].read()
    # Then the other Region served, the only destination that could, and the answer fits botocore's shape
    assert (answer["InvokedRoutedResourceArn"], answer["RoutingReason"]) == (arns[1], "only-healthy")
    assert answer["InvokedProductionVariant"] == "primary"
    assert operation_problems(router, "invoke_inference_router", {**answer, "Body": body}) == []
    direct = regional("sagemaker-runtime", OTHER).invoke_endpoint(
        EndpointName="ep", Body=ONE_TEXT, ContentType="application/json"
    )
    assert body == direct["Body"].read()

    # When it names a routing target it does not have, it is refused as the runtime refuses
    with pytest.raises(ClientError) as refused:
        router.invoke_inference_router(InferenceRouterName="router", RoutingTargetName="other", Body=ONE_TEXT)
    assert refused.value.response["Error"]["Code"] == "ValidationException"

    # When it is deleted, nothing of it is left in its Region
    home.delete_inference_router(InferenceRouterName="router")
    with pytest.raises(ClientError) as gone:
        home.describe_inference_router(InferenceRouterName="router")
    assert gone.value.response["Error"]["Code"] == "ResourceNotFound"
    assert home.list_inference_routers()["InferenceRouters"] == []


def test_with_both_regions_in_service_the_router_serves_from_its_own(
    engine: LocalEngine, tiny_artifact: Path, tmp_path: Path
) -> None:
    # Given both Regions' endpoints InService and a router in the second Region (no cap reached)
    home, away = regional("sagemaker", REGION), regional("sagemaker", OTHER)
    arns = [
        deployed(home, staged(tiny_artifact, REGION, tmp_path)),
        deployed(away, staged(tiny_artifact, OTHER, tmp_path)),
    ]
    for client in (home, away):
        wait_for(
            lambda c=client: c.describe_endpoint(EndpointName="ep"),
            lambda d: d["EndpointStatus"] == "InService",
        )
    away.create_inference_router(
        InferenceRouterName="west",
        RoutingTargets=[{"Name": "main", "Destinations": [{"ResourceArn": a} for a in arns]}],
    )
    # When it is invoked in its own Region
    answer = regional("sagemaker-inference-router-runtime", OTHER).invoke_inference_router(
        InferenceRouterName="west", RoutingTargetName="main", Body=ONE_TEXT, ContentType="application/json"
    )
    # Then its own Region's endpoint served, preferred as local
    assert (answer["InvokedRoutedResourceArn"], answer["RoutingReason"]) == (arns[1], "local-preferred")
    # And the router is only in its own Region
    with pytest.raises(ClientError):
        home.describe_inference_router(InferenceRouterName="west")


def test_teardown_of_a_run_across_regions_leaves_nothing_in_either(
    engine: LocalEngine, tiny_artifact: Path, tmp_path: Path
) -> None:
    # Given a run's endpoint resources in both Regions and its router in the primary, tagged as the run's
    run_id = "routed-1"
    spec = fast_spec(
        "bundled", hosting={"regions": [REGION, OTHER], "cross_region": {"max_invocations_per_instance": 40}}
    )
    tags = [dict(t) for t in naming.tags(run_id, spec)]
    name = naming.endpoint_name(run_id, 1)
    home, away = regional("sagemaker", REGION), regional("sagemaker", OTHER)
    arns = []
    for client, region in ((home, REGION), (away, OTHER)):
        uri = staged(tiny_artifact, region, tmp_path)
        client.create_model(ModelName=name, ExecutionRoleArn=ROLE, PrimaryContainer=container(uri), Tags=tags)
        variant = {
            "VariantName": "primary",
            "ModelName": name,
            "InstanceType": "ml.c6i.xlarge",
            "InitialInstanceCount": 1,
        }
        client.create_endpoint_config(EndpointConfigName=name, ProductionVariants=[variant], Tags=tags)
        arns.append(
            client.create_endpoint(EndpointName=name, EndpointConfigName=name, Tags=tags)["EndpointArn"]
        )
    for client in (home, away):
        endpoint_settled(client, name)
    home.create_inference_router(
        **create_router_request(naming.router_name(run_id), destinations=arns, tags=tags)
    )
    # And another run's router, which is not this run's to delete
    home.create_inference_router(**create_router_request("db-other-router", destinations=arns, tags=tags))
    state = PipelineState(run_id=run_id, spec=spec)
    settings = Settings(bucket=BUCKET, sagemaker_role_arn=ROLE)

    # When the run is torn down, each other Region through its own client
    result = teardown(
        state,
        sagemaker=home,
        s3=engine.client("s3"),
        settings=settings,
        regional=lambda r: regional("sagemaker", r),
    )

    # Then the router went first, the other Region's resources are named by their Region, and nothing is left
    assert result.deleted[0] == f"inference-router/{naming.router_name(run_id)}"
    assert {f"{OTHER}/endpoint/{name}", f"{OTHER}/endpoint-config/{name}", f"{OTHER}/model/{name}"} <= set(
        result.deleted
    )
    assert f"endpoint/{name}" in result.deleted
    assert [r["InferenceRouterName"] for r in home.list_inference_routers()["InferenceRouters"]] == [
        "db-other-router"
    ]
    for client in (home, away):
        wait_for(lambda c=client: c.list_endpoints(), lambda listed: listed["Endpoints"] == [])
        assert client.list_models()["Models"] == client.list_endpoint_configs()["EndpointConfigs"] == []
    home.delete_inference_router(InferenceRouterName="db-other-router")
