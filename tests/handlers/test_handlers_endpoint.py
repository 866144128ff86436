"""The endpoint handlers, called as Lambda calls them, on moto's SageMaker: describe, remediate, tear down, report."""

from __future__ import annotations

from typing import Any

from lambdas import (
    deploy_endpoint,
    describe_endpoint,
    diagnose_failure,
    place_inference_components,
    plan_remediation,
    remove_failed_attempt,
    teardown_endpoint,
    write_report,
)
from tests.support.aws import Aws
from tests.support.handlers import deployed_state, invoke
from workflows.contracts import (
    AttemptRequest,
    DescribeRequest,
    Diagnosis,
    EndpointStatus,
    ErrorInfo,
    PipelineState,
    ReportRequest,
)

# Instance types moto's SageMaker accepts.
TYPES = ["ml.m5.xlarge", "ml.m5.2xlarge"]


def deployed(run_id: str) -> PipelineState:
    return deployed_state(deploy_endpoint, run_id, TYPES)


def stalled(run_id: str) -> PipelineState:
    """A deployed run whose wait loop caught a capacity stall, as DiagnoseFailure leaves it."""
    state = deployed(run_id).model_copy(
        update={
            "endpoint": EndpointStatus(status="Creating", polls=7),
            "error": ErrorInfo(Error="CapacityStall", Cause="no instance assigned after 20 min"),
        }
    )
    diagnosis = Diagnosis.model_validate(invoke(diagnose_failure, state))
    return state.model_copy(update={"diagnosis": diagnosis})


def endpoints(aws: Aws) -> list[str]:
    return [e["EndpointName"] for e in aws.sagemaker.list_endpoints()["Endpoints"]]


def test_describe_endpoint_polls_the_endpoint_deploy_created(aws: Aws) -> None:
    # Given the run's endpoint created by DeployEndpoint (moto has it InService at once)
    state = deployed("h-describe")
    assert state.deploy is not None
    event = DescribeRequest(run_id=state.run_id, spec=state.spec, deploy=state.deploy)
    # When DescribeEndpoint polls it
    result = invoke(describe_endpoint, event)
    # Then it reports SageMaker's status as its first poll
    assert (
        result["status"] == aws.sagemaker.describe_endpoint(EndpointName="db-h-describe-a1")["EndpointStatus"]
    )
    assert result["polls"] == 1


def test_place_inference_components_has_nothing_to_place_on_a_realtime_endpoint(aws: Aws) -> None:
    # Given a realtime endpoint InService (its model is in the endpoint config: no components)
    state = deployed("h-place")
    assert state.deploy is not None
    event = DescribeRequest(run_id=state.run_id, spec=state.spec, deploy=state.deploy)
    # When PlaceInferenceComponents polls it
    result = invoke(place_inference_components, event)
    # Then it is ready at once, with no component to follow, and the endpoint is as deploy left it
    assert (result["status"], result["phase"], result["components"]) == ("InService", "ready", [])
    assert result["polls"] == 1
    described = aws.sagemaker.describe_endpoint(EndpointName="db-h-place-a1")
    assert described["EndpointConfigName"] == state.deploy.endpoint_config_name


def test_plan_remediation_moves_a_capacity_stall_to_the_next_instance_type(aws: Aws) -> None:
    # Given a stall diagnosed on the first instance type
    state = stalled("h-plan")
    # When PlanRemediation plans the next attempt
    result = PipelineState.model_validate(invoke(plan_remediation, state))
    # Then attempt 2 deploys on the next instance type, recorded in the history
    assert result.remediation is not None and result.remediation.route != "fail"
    assert (result.attempt.number, result.attempt.instance_type_index) == (2, 1)
    assert result.attempt.history[-1].diagnosis_id == state.diagnosis.id  # type: ignore[union-attr]


def test_remove_failed_attempt_deletes_the_stalled_attempt_only(aws: Aws) -> None:
    # Given attempt 1 stalled and remediation planned attempt 2
    planned = PipelineState.model_validate(invoke(plan_remediation, stalled("h-remove")))
    event = AttemptRequest(run_id=planned.run_id, spec=planned.spec, attempt=planned.attempt)
    # When RemoveFailedAttempt runs
    result = invoke(remove_failed_attempt, event)
    # Then attempt 1's endpoint, config and model are gone and recorded as removed
    assert result["history"][-1]["removed"] == [
        "endpoint/db-h-remove-a1",
        "endpoint-config/db-h-remove-a1",
        "model/db-h-remove-a1-m0",
    ]
    assert endpoints(aws) == []


def test_teardown_endpoint_deletes_everything_the_run_created(aws: Aws) -> None:
    # Given a deployed run beside another run's endpoint
    deployed("h-other")
    state = deployed("h-teardown")
    # When TeardownEndpoint runs
    result = invoke(teardown_endpoint, state)
    # Then the run's endpoint, config and model are deleted and verified gone; the other run's stays
    assert {
        "endpoint/db-h-teardown-a1",
        "endpoint-config/db-h-teardown-a1",
        "model/db-h-teardown-a1-m0",
    } <= set(result["deleted"])
    assert result["remaining"] == []
    assert endpoints(aws) == ["db-h-other-a1"]


def test_write_failure_report_writes_the_result_and_report_under_the_run(aws: Aws) -> None:
    # Given a run that failed in the wait loop, diagnosed
    state = stalled("h-report")
    # When WriteFailureReport runs
    result = invoke(write_report, ReportRequest(state=state, status="FAILED"))
    # Then result.json and report.md are in the run's results folder and say why it failed
    keys = {
        o["Key"] for o in aws.s3.list_objects_v2(Bucket=aws.bucket, Prefix="results/h-report/")["Contents"]
    }
    assert {"results/h-report/result.json", "results/h-report/report.md"} <= keys
    assert result["result_uri"] == f"s3://{aws.bucket}/results/h-report/result.json"
    body: Any = aws.s3.get_object(Bucket=aws.bucket, Key="results/h-report/result.json")["Body"].read()
    assert b"CapacityStall" in body
