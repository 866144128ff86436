"""Teardown's last check: nothing tagged for the run remains, as the Resource Groups Tagging API sees it.

moto's SageMaker, CloudWatch and tagging API for the end-to-end checks; a stubbed tagging API for
its lag behind deletes (AWS lists "tagged or previously tagged" resources), which moto does not have.
"""

from __future__ import annotations

import pytest

from tests.support.aws import Aws
from tests.support.hosting import SETTINGS, request, stubbed
from workflows.contracts import PipelineState
from workflows.errors import TeardownIncomplete
from workflows.hosting.tagged import RESOURCE_TYPES, parse_arn, tagged_leftovers
from workflows.naming import TAG_RUN_ID, tags
from workflows.steps.deploy_endpoint import deploy
from workflows.steps.teardown_endpoint import teardown

RUN_TAG = [{"Key": TAG_RUN_ID, "Values": ["run-1"]}]


def deployed(aws: Aws, run_id: str = "run-1") -> PipelineState:
    deploy_request = request({"mode": "realtime", "instance_type_fallbacks": ["ml.m5.xlarge"]}).model_copy(
        update={"run_id": run_id}
    )
    result = deploy(deploy_request, sagemaker=aws.sagemaker, settings=SETTINGS)
    return PipelineState(run_id=run_id, spec=deploy_request.spec, deploy=result)


def tagged_for(aws: Aws, run_id: str) -> list[str]:
    pages = aws.tagging.get_resources(TagFilters=[{"Key": TAG_RUN_ID, "Values": [run_id]}])
    return sorted(m["ResourceARN"] for m in pages["ResourceTagMappingList"])


def test_after_teardown_nothing_tagged_for_the_run_remains(aws: Aws) -> None:
    # Given a real-time run deployed on moto: model, endpoint config and endpoint, all tagged
    state = deployed(aws)
    assert sorted(parse_arn(a)[0] for a in tagged_for(aws, "run-1")) == [
        "endpoint",
        "endpoint-config",
        "model",
    ]
    # When teardown runs with the tagging client
    result = teardown(state, sagemaker=aws.sagemaker, s3=aws.s3, settings=SETTINGS,
                      cloudwatch=aws.cloudwatch, tagging=aws.tagging)  # fmt: skip
    # Then it deleted the three, and the tagging API finds nothing of the run any more
    assert sorted(result.deleted) == [
        "endpoint-config/db-run-1-a1",
        "endpoint/db-run-1-a1",
        "model/db-run-1-a1-m0",
    ]
    assert tagged_for(aws, "run-1") == []


def test_a_resource_tagged_for_the_run_under_another_name_fails_the_teardown(aws: Aws) -> None:
    # Given a run, and a model and an alarm tagged with its id but named outside db-run-1-*
    state = deployed(aws)
    run_tags = tags("run-1", state.spec)
    aws.sagemaker.create_model(ModelName="hand-made", ExecutionRoleArn=SETTINGS.sagemaker_role_arn,
                                  PrimaryContainer={"Image": "x"}, Tags=run_tags)  # fmt: skip
    aws.cloudwatch.put_metric_alarm(
        AlarmName="hand-made-alarm", MetricName="M", Namespace="N", Statistic="Maximum", Period=60,
        EvaluationPeriods=1, Threshold=1, ComparisonOperator="GreaterThanThreshold", Tags=run_tags,
    )  # fmt: skip
    # When teardown runs
    with pytest.raises(TeardownIncomplete) as raised:
        teardown(state, sagemaker=aws.sagemaker, s3=aws.s3, settings=SETTINGS,
                 cloudwatch=aws.cloudwatch, tagging=aws.tagging)  # fmt: skip
    # Then it names both (its IAM may delete db-* names only), having deleted what is the run's by name
    message = str(raised.value)
    assert "model/hand-made (tagged deploybench:run-id=run-1" in message
    assert "alarm/hand-made-alarm (tagged deploybench:run-id=run-1" in message
    assert "endpoint/db-run-1" not in message and "model/db-run-1" not in message
    assert [parse_arn(a)[1] for a in tagged_for(aws, "run-1")] == ["hand-made-alarm", "hand-made"]


def test_teardown_of_run_1_leaves_run_10_alone(aws: Aws) -> None:
    # Given two runs whose ids share a beginning: run-1 and run-10
    state = deployed(aws, "run-1")
    deployed(aws, "run-10")
    # When run-1 is torn down
    result = teardown(state, sagemaker=aws.sagemaker, s3=aws.s3, settings=SETTINGS, tagging=aws.tagging)
    # Then only run-1's resources went; run-10's model, config and endpoint are all still there
    assert all("db-run-1-a1" in d for d in result.deleted) and len(result.deleted) == 3
    assert len(tagged_for(aws, "run-10")) == 3
    assert aws.sagemaker.describe_endpoint(EndpointName="db-run-10-a1")["EndpointStatus"]


def test_the_tagging_api_lag_behind_deletes_is_not_a_leftover() -> None:
    arn = "arn:aws:sagemaker:us-east-1:123456789012:{}"
    with (
        stubbed("resourcegroupstaggingapi") as (tagging, tag_stub),
        stubbed("sagemaker") as (sagemaker, sm_stub),
    ):
        # Given the tagging API still listing a deleted db-run-1 endpoint, a gone foreign-named model
        # and the run's benchmark job (SageMaker keeps a finished job's record)
        tag_stub.add_response(
            "get_resources",
            {"ResourceTagMappingList": [{"ResourceARN": arn.format("endpoint/db-run-1-a1")},
                                        {"ResourceARN": arn.format("model/renamed")},
                                        {"ResourceARN": arn.format("endpoint/kept-one")},
                                        {"ResourceARN": arn.format("processing-job/bench-of-run-1")}]},
            {"TagFilters": RUN_TAG, "ResourceTypeFilters": RESOURCE_TYPES},
        )  # fmt: skip
        sm_stub.add_client_error(
            "describe_model", "ValidationException", "Could not find model \"renamed\".", 400,
            expected_params={"ModelName": "renamed"},
        )  # fmt: skip
        # When the leftovers are computed (kept-one is kept on purpose)
        found = tagged_leftovers("run-1", prefix="db-run-1-", tagging=tagging, sagemaker=sagemaker,
                                 cloudwatch=None, kept=lambda name: name == "kept-one")  # fmt: skip
    # Then the prefixed name is left to the name listings, the gone model is not reported
    assert found == []


def test_arns_parse_into_kind_and_name() -> None:
    assert parse_arn("arn:aws:sagemaker:us-east-1:1:inference-component/db-r-a1-ic0") == (
        "inference-component",
        "db-r-a1-ic0",
    )
    assert parse_arn("arn:aws:cloudwatch:us-east-1:1:alarm:db-r-a1-ic0-no-capacity") == (
        "alarm",
        "db-r-a1-ic0-no-capacity",
    )
