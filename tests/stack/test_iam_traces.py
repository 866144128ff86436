"""A traced endpoint's traces log group: the SageMaker role writes it under the endpoint groups' grant, and
DeployEndpoint gives it the run's tags and a retention; neither reaches another endpoint's group."""

from __future__ import annotations

from tests.stack.test_iam_contract import REGION, sagemaker_role
from tests.support.hosting import request, stubbed
from tests.support.iam import allowed, denials
from tests.support.iam_actions import Where
from tests.support.iam_recording import RECORDER, acting_as
from tests.support.iam_sagemaker import log_writes
from workflows.hosting.traces_group import keep_traces
from workflows.naming import endpoint_traces_log_group


def test_sagemaker_may_write_a_run_endpoints_traces_and_no_other_endpoints() -> None:
    # Given the stack's SageMaker role, and the traces group of a run's endpoint and of another's
    role = sagemaker_role()
    where = Where(REGION, "123456789012")
    ours = log_writes(where, endpoint_traces_log_group("db-run-1-a1"), "AllTraffic/i-0123456789abcdef0")
    theirs = log_writes(where, endpoint_traces_log_group("prod-endpoint"), "AllTraffic/i-0123456789abcdef0")
    # Then every write to the run's traces group is allowed (the endpoint groups' grant covers it)
    assert [a.describe() for a in ours if not allowed(role, a)] == []
    # And none to an endpoint outside the run's prefix
    assert [a.describe() for a in theirs if allowed(role, a)] == []


def _keep(endpoint: str) -> list[str]:
    """The actions DeployEndpoint is refused when it gives ``endpoint``'s traces group its tags and retention."""
    hosting = request(
        {"instance_type_fallbacks": ["ml.c6i.xlarge"], "tracing": {"sampling_percent": 1}}
    ).spec.hosting
    group = endpoint_traces_log_group(endpoint)
    RECORDER.take()
    with stubbed("logs") as (logs, stub):
        stub.add_response(
            "create_log_group", {}, {"logGroupName": group, "tags": {"deploybench:managed": "true"}}
        )
        stub.add_response("put_retention_policy", {}, {"logGroupName": group, "retentionInDays": 30})
        with acting_as("DeployEndpointFunctionArn"):
            keep_traces(logs, hosting, endpoint=endpoint, tags={"deploybench:managed": "true"})
    return [denial.access.action for denial in denials(RECORDER.take())]


def test_deploy_may_give_a_run_endpoints_traces_group_its_tags_and_retention_and_no_other() -> None:
    # Given DeployEndpoint's grants, when it creates the traces group with tags and sets its retention
    # Then the run's endpoint's group is within them (CreateLogGroup, TagResource, PutRetentionPolicy)
    assert _keep("db-run-1-a1") == []
    # And another endpoint's group is not
    assert set(_keep("prod-endpoint")) == {
        "logs:CreateLogGroup",
        "logs:TagResource",
        "logs:PutRetentionPolicy",
    }
