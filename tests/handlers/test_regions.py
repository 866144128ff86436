"""Regions after pools: the multi-Region spec, its requests in botocore's shapes, and its preflight."""

from __future__ import annotations

import json
from typing import Any

import botocore.session
import pytest
from botocore.stub import ANY
from botocore.validate import ParamValidator
from typer.testing import CliRunner

from tests.conftest import ROOT
from tests.support.hosting import stubbed
from workflows.cli.app import app
from workflows.errors import SpecInvalid
from workflows.hosting.create_calls import create_endpoint
from workflows.hosting.region_checks import botocore_findings, region_findings
from workflows.hosting.regions import (
    RegionSettings,
    create_router_request,
    cross_region_traffic_config,
    endpoint_arn,
)
from workflows.spec.pipeline import load_spec, parse_spec
from workflows.steps.check_spec import check_spec

MODEL = botocore.session.get_session().get_service_model("sagemaker")
EXAMPLE = ROOT / "examples" / "regions-router.yaml"
runner = CliRunner()


def valid(params: dict[str, Any], shape: str) -> None:
    report = ParamValidator().validate(params, MODEL.shape_for(shape))
    assert not report.has_errors(), report.generate_report()


def test_the_router_and_the_cross_region_cap_are_built_in_botocores_shapes() -> None:
    # Given the two-Region example
    hosting = load_spec(EXAMPLE).hosting
    settings = RegionSettings(regions=hosting.regions, cross_region=hosting.cross_region)
    # When the router over both Regions' endpoints and each endpoint config's cap are built
    arns = [endpoint_arn(region, "123456789012", "db-run-1-a1") for region in settings.regions]
    router = create_router_request(
        "db-run-1", destinations=arns, tags=[{"Key": "deploybench:run", "Value": "run-1"}]
    )
    cap = cross_region_traffic_config(settings)
    # Then both validate against botocore's sagemaker model
    valid(router, "CreateInferenceRouterInput")
    valid(cap["CrossRegionTrafficConfig"], "CrossRegionTrafficConfig")
    # And the router serves from its own Region first, over the primary's endpoint and then the other's
    (target,) = router["RoutingTargets"]
    assert target["RoutingPreference"] == "LocalRegionFirst"
    assert [d["ResourceArn"].split(":")[3] for d in target["Destinations"]] == ["us-west-2", "us-east-1"]
    assert cap == {
        "CrossRegionTrafficConfig": {
            "MaxInvocationsPerSecondPerInstance": 40,
            "MaxCrossRegionPercentPerEndpoint": 50,
        }
    }


def test_one_region_has_no_cap_and_two_need_one() -> None:
    assert cross_region_traffic_config(RegionSettings(regions=["us-east-1"])) == {}
    with pytest.raises(
        ValueError, match="two Regions or more need cross_region.max_invocations_per_instance"
    ):
        RegionSettings(regions=["us-west-2", "us-east-1"])
    with pytest.raises(ValueError, match="name a Region twice"):
        RegionSettings(regions=["us-east-1", "us-east-1"], cross_region={"max_invocations_per_instance": 1})
    with pytest.raises(ValueError, match="are not AWS Region names"):
        RegionSettings(regions=["us-west-2", "useast1"], cross_region={"max_invocations_per_instance": 1})


def test_the_two_region_example_passes_preflight_checking_each_regions_images() -> None:
    # When the example is checked in its primary Region
    result = runner.invoke(app, ["preflight", "--json", "--region", "us-west-2", str(EXAMPLE)])
    # Then nothing blocks, each Region's images were resolved, and what was not read is said
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert [f for f in report["findings"] if f["severity"] == "blocking"] == []
    assert any(line.startswith("images offered in us-east-1:") for line in report["checked"]), report[
        "checked"
    ]
    assert any("inference routers offered in us-west-2, us-east-1" in line for line in report["skipped"])


@pytest.mark.parametrize(
    ("regions", "run_region", "says"),
    [
        (["us-west-2", "us-east-1"], "us-east-1", "the run deploys in us-east-1"),
        (["us-east-1", "cn-north-1"], "us-east-1", "cn-north-1 are outside the primary's partition (aws)"),
        (["us-east-1", "xx-nowhere-9"], "us-east-1", "lists no SageMaker in xx-nowhere-9"),
    ],
)
def test_a_router_that_could_not_exist_is_refused(regions: list[str], run_region: str, says: str) -> None:
    settings = RegionSettings(regions=regions, cross_region={"max_invocations_per_instance": 10})
    messages = [f.message for f in region_findings(settings, run_region, local=False)]
    assert any(says in m for m in messages), messages


def test_the_installed_botocore_has_the_router_api() -> None:
    assert botocore_findings() == []


def test_a_run_across_regions_is_refused_in_a_mode_that_cannot_move_to_another_region() -> None:
    # Given the two-Region example in a mode with inference components
    spec = load_spec(EXAMPLE)
    data = spec.model_dump(mode="json", exclude_none=True)
    data["hosting"] = {**data["hosting"], "mode": "inference-component"}
    moved = parse_spec(data)
    # When CheckSpec runs, Then it is refused before anything is created, naming the mode that can
    with pytest.raises(SpecInvalid, match="in the realtime mode only so far, not inference-component"):
        check_spec(moved, s3=None, region="us-west-2")


def test_a_real_time_run_across_regions_passes_the_spec_check() -> None:
    # Given the two-Region real-time example, When CheckSpec runs (no quota client: not read)
    result = check_spec(load_spec(EXAMPLE), s3=None, region="us-west-2")
    # Then nothing blocks
    assert [f for f in result.findings if f.severity == "blocking"] == []


def test_each_regions_endpoint_config_carries_the_cross_region_cap() -> None:
    # Given the two-Region example's hosting and one real-time variant
    hosting = load_spec(EXAMPLE).hosting
    variant = {
        "VariantName": "primary",
        "ModelName": "m",
        "InstanceType": "ml.g5.xlarge",
        "InitialInstanceCount": 1,
    }
    with stubbed("sagemaker") as (sagemaker, stub):
        # Then CreateEndpointConfig carries CrossRegionTrafficConfig (the Stubber validates it against botocore)
        stub.add_response(
            "create_endpoint_config",
            {"EndpointConfigArn": "arn:aws:sagemaker:us-west-2:123456789012:endpoint-config/c"},
            {
                "EndpointConfigName": "c",
                "ProductionVariants": [variant],
                "Tags": [],
                "MetricsConfig": ANY,
                "CrossRegionTrafficConfig": {
                    "MaxInvocationsPerSecondPerInstance": 40,
                    "MaxCrossRegionPercentPerEndpoint": 50,
                },
            },
        )
        stub.add_response(
            "create_endpoint",
            {"EndpointArn": "arn:aws:sagemaker:us-west-2:123456789012:endpoint/e"},
            {"EndpointName": "e", "EndpointConfigName": "c", "Tags": []},
        )
        create_endpoint(sagemaker, config="c", endpoint="e", variants=[variant], tags=[], hosting=hosting)
        stub.assert_no_pending_responses()
