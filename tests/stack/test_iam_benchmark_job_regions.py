"""The benchmark job's role after a run moved across Regions: it may invoke the run's endpoint in any Region and
the run's router in the stack's Region (which calls each destination with the job's own credentials), and
nothing outside the project's names."""

from __future__ import annotations

from tests.stack.test_iam_contract import REGION, sagemaker_role
from tests.support.iam import allowed
from tests.support.iam_actions import Access, Where, accesses
from tests.support.iam_recording import Request

ACCOUNT = "123456789012"
OTHER = "us-west-2"


def test_the_job_may_invoke_a_moved_endpoint_and_the_runs_router_and_nothing_else() -> None:
    # Given the requests of a moved run's job: InvokeEndpoint in the endpoint's Region, InvokeInferenceRouter in
    # the stack's, and the router's own call to each destination made with the job's credentials
    requests = [
        Request(None, "sagemaker-runtime", "InvokeEndpoint", OTHER, {"EndpointName": "db-run-1-a2", "Body": b"{}"}),
        Request(
            None, "sagemaker-inference-router-runtime", "InvokeInferenceRouter", REGION,
            {"InferenceRouterName": "db-run-1-router", "RoutingTargetName": "main", "Body": b"{}"},
        ),
        Request(None, "sagemaker-runtime", "InvokeEndpoint", REGION, {"EndpointName": "db-run-1-a1", "Body": b"{}"}),
    ]  # fmt: skip
    needed = [a for r in requests for a in accesses(r, Where(r.region, ACCOUNT))]
    assert {a.action for a in needed} == {"sagemaker:InvokeEndpoint", "sagemaker:InvokeInferenceRouter"}
    # When the stack's SageMaker role is evaluated
    role = sagemaker_role()
    # Then every one is allowed
    assert [a.describe() for a in needed if not allowed(role, a)] == []
    # But not an endpoint or a router outside the db-* names, in any Region
    outside = [
        Access("sagemaker:InvokeEndpoint", Where(OTHER, ACCOUNT).sagemaker("endpoint", "prod-model")),
        Access(
            "sagemaker:InvokeInferenceRouter", Where(REGION, ACCOUNT).sagemaker("inference-router", "prod")
        ),
        # nor another action on a run's endpoint elsewhere
        Access("sagemaker:DeleteEndpoint", Where(OTHER, ACCOUNT).sagemaker("endpoint", "db-run-1-a2")),
    ]
    assert [a.describe() for a in outside if allowed(role, a)] == []
