"""Deletes, updates and stops only of deploybench's own SageMaker resources: named ``db-*`` and tagged.

The synthesized policies are evaluated offline (``tests/support/iam.py``) with each resource's tags as
``aws:ResourceTag`` keys, learnt from the recorded requests (``tests/support/iam_tags.py``).
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

import pytest

from infra.ownership import SAGEMAKER_CHANGE, SAGEMAKER_CLEANUP
from lambdas import deploy_endpoint, teardown_endpoint
from tests.conftest import fast_spec
from tests.support.aws import Aws
from tests.support.handlers import deployed_state, invoke
from tests.support.hosting import BUCKET
from tests.support.iam import Binding, allowed, denials, function_role, principal
from tests.support.iam_actions import Access, Where, accesses
from tests.support.iam_recording import RECORDER, Request
from tests.support.iam_tags import ResourceTags
from tests.support.infra import synthesize
from workflows import naming
from workflows.contracts import PipelineState

REGION = "us-east-1"
ACCOUNT = "123456789012"
WHERE = Where(REGION, ACCOUNT)
SETTINGS_ENV = (("DEPLOYBENCH_BUCKET", BUCKET),)
TEARDOWN = "TeardownEndpointFunctionArn"
JANITOR = "JanitorFunctionArn"
# The resource kind each change action names first (UpdateEndpoint's config is read, not changed).
KIND_OF = {
    "Model": "model",
    "EndpointConfig": "endpoint-config",
    "Endpoint": "endpoint",
    "EndpointWeightsAndCapacities": "endpoint",
    "InferenceComponent": "inference-component",
    "InferenceComponentRuntimeConfig": "inference-component",
    "ProcessingJob": "processing-job",
}
MANAGED = f"aws:ResourceTag/{naming.TAG_MANAGED}"
# moto's SageMaker accepts these instance types.
TYPES = ["ml.m5.xlarge", "ml.m5.2xlarge"]


def role_of(placeholder: str) -> Any:
    return principal(function_role(synthesize(), placeholder), Binding(ACCOUNT, REGION, SETTINGS_ENV))


def target(action: str, name: str = "db-run-1-a1") -> str:
    verb = next(v for v in ("Delete", "Update", "Stop") if action.startswith(f"sagemaker:{v}"))
    return WHERE.sagemaker(KIND_OF[action.removeprefix(f"sagemaker:{verb}")], name)


def sagemaker(function: str | None, operation: str, **params: Any) -> Request:
    return Request(function, "sagemaker", operation, REGION, params, SETTINGS_ENV)


def run_tags(**spec: Any) -> list[dict[str, str]]:
    return [dict(t) for t in naming.tags("run-1", fast_spec("bundled", **spec))]


@functools.cache
def authorization_facts() -> dict[str, Any]:
    """The Service Authorization Reference as cfn-lint bundles it: each service's actions, the
    resource types each is authorized on, and each resource type's condition keys."""
    text = resources.files("cfnlint").joinpath("data/AdditionalSpecs/Policies.json").read_text()
    return dict(json.loads(text))


@pytest.mark.parametrize("action", [*SAGEMAKER_CHANGE, "cloudwatch:DeleteAlarms"])
def test_every_tag_scoped_action_is_authorized_on_resources_with_resource_tags(action: str) -> None:
    # Given the reference's resource types of the action (a condition on a key the resource type
    # lacks would deny every call)
    service, name = action.split(":")
    facts = authorization_facts()[service]
    actions = {k.lower(): v for k, v in facts["Actions"].items()}
    kinds = {k.lower(): v for k, v in facts["Resources"].items()}
    authorized_on = [kind.lower() for kind in actions[name.lower()]["Resources"]]
    # Then each of them offers aws:ResourceTag
    assert authorized_on
    assert all("aws:ResourceTag/${TagKey}" in kinds[kind]["ConditionKeys"] for kind in authorized_on)


@pytest.mark.parametrize(
    ("function", "action"),
    [(TEARDOWN, a) for a in SAGEMAKER_CHANGE] + [(JANITOR, a) for a in SAGEMAKER_CLEANUP],
)
def test_a_change_of_a_db_resource_needs_the_managed_tag_on_it(function: str, action: str) -> None:
    role = role_of(function)
    # Then a db-* resource tagged deploybench:managed=true may be changed
    assert allowed(role, Access(action, target(action), {MANAGED: "true"}))
    # But not one without the tag, with another value, or tagged but named outside db-*
    assert not allowed(role, Access(action, target(action)))
    assert not allowed(role, Access(action, target(action), {MANAGED: "false"}))
    assert not allowed(role, Access(action, target(action), {"aws:ResourceTag/deploybench:run-id": "run-1"}))
    assert not allowed(role, Access(action, target(action, "other-1"), {MANAGED: "true"}))


def test_the_evaluator_denies_deleting_a_db_endpoint_created_without_the_managed_tag() -> None:
    # Given a db-* endpoint someone created untagged, and one created with the run's tags
    foreign = sagemaker(None, "CreateEndpoint", EndpointName="db-run-1-a1", EndpointConfigName="x")
    own = sagemaker(
        None, "CreateEndpoint", EndpointName="db-run-1-a2", EndpointConfigName="x", Tags=run_tags()
    )
    # When teardown deletes both
    found = denials(
        [
            foreign,
            own,
            sagemaker(TEARDOWN, "DeleteEndpoint", EndpointName="db-run-1-a1"),
            sagemaker(TEARDOWN, "DeleteEndpoint", EndpointName="db-run-1-a2"),
        ]
    )
    # Then only the untagged one is refused, and the denial names the action and the resource
    assert [d.access.resource for d in found] == [WHERE.sagemaker("endpoint", "db-run-1-a1")]
    assert "sagemaker:DeleteEndpoint" in str(found[0]) and "TeardownEndpoint" in str(found[0])


def test_the_evaluator_follows_tags_removed_after_the_create() -> None:
    # Given a run's model whose managed tag was removed after it was created
    arn = WHERE.sagemaker("model", "db-run-1-a1-m0")
    recorded = [
        sagemaker(None, "CreateModel", ModelName="db-run-1-a1-m0", Tags=run_tags()),
        sagemaker(None, "DeleteTags", ResourceArn=arn, TagKeys=[naming.TAG_MANAGED]),
        sagemaker(TEARDOWN, "DeleteModel", ModelName="db-run-1-a1-m0"),
    ]
    # Then deleting it is refused
    assert [d.access.action for d in denials(recorded)] == ["sagemaker:DeleteModel"]
    # And a create's own authorizations see the request's tags, never a deleted namesake's
    tags = ResourceTags()
    tags.record(recorded[0], WHERE)
    again = sagemaker(TEARDOWN, "CreateModel", ModelName="db-run-1-a1-m0", Tags=[])
    assert all(MANAGED not in tags.given(a, again, WHERE).context for a in accesses(again, WHERE))


def test_a_delete_the_service_refused_leaves_the_resource_and_its_tags() -> None:
    # Given a run's endpoint whose first delete was refused (still Creating: ResourceBusy)
    busy = sagemaker(TEARDOWN, "DeleteEndpoint", EndpointName="db-run-1-a1")
    busy.outcome["status"] = 400
    recorded = [
        sagemaker(
            None, "CreateEndpoint", EndpointName="db-run-1-a1", EndpointConfigName="x", Tags=run_tags()
        ),
        busy,
        sagemaker(TEARDOWN, "DeleteEndpoint", EndpointName="db-run-1-a1"),
    ]
    # Then teardown's retry still finds it deploybench's: nothing is denied
    assert denials(recorded) == []
    # And once a delete succeeded, the resource (and its tags) is gone for the evaluator
    done = sagemaker(TEARDOWN, "DeleteEndpoint", EndpointName="db-run-1-a1")
    done.outcome["status"] = 200
    assert [d.access.action for d in denials([recorded[0], done, *recorded[2:]])] == [
        "sagemaker:DeleteEndpoint"
    ]


def test_tagging_cannot_make_a_foreign_resource_managed_outside_a_create() -> None:
    endpoint = WHERE.sagemaker("endpoint", "db-run-1-a1")
    keep = [{"Key": naming.TAG_KEEP, "Value": "true"}]
    managed = [{"Key": naming.TAG_MANAGED, "Value": "true"}]
    created = sagemaker(None, "CreateEndpoint", EndpointName="db-run-1-a1", EndpointConfigName="x")
    # The janitor may not tag at all, not even the managed tag a create carries
    assert denials([created, sagemaker(JANITOR, "AddTags", ResourceArn=endpoint, Tags=managed)])
    # Teardown's keep mark needs the resource to be deploybench's already
    assert denials([created, sagemaker(TEARDOWN, "AddTags", ResourceArn=endpoint, Tags=keep)])
    tagged = sagemaker(None, "AddTags", ResourceArn=endpoint, Tags=run_tags())
    assert denials([created, tagged, sagemaker(TEARDOWN, "AddTags", ResourceArn=endpoint, Tags=keep)]) == []
    # And the keep mark carries no other key (an expiry or run id would re-label the resource)
    relabel = [*keep, {"Key": naming.TAG_RUN_ID, "Value": "run-2"}]
    assert denials([created, tagged, sagemaker(TEARDOWN, "AddTags", ResourceArn=endpoint, Tags=relabel)])


def deployed(run_id: str, **spec: Any) -> PipelineState:
    return deployed_state(deploy_endpoint, run_id, TYPES, **spec)


def charged_changes(recorded: list[Request]) -> list[str]:
    return [
        r.operation
        for r in recorded
        if r.function == TEARDOWN
        and r.operation.startswith(("Delete", "AddTags"))
        and r.service == "sagemaker"
    ]


def test_the_pipeline_may_delete_what_its_deploy_created(aws: Aws) -> None:
    # Given the DeployEndpoint handler's realtime endpoint, config and model (tagged by the creates)
    state = deployed("h-tags")
    # When the TeardownEndpoint handler removes them
    invoke(teardown_endpoint, state)
    recorded = RECORDER.peek()
    # Then its deletes were evaluated with the managed tag on each resource, and all are allowed
    assert charged_changes(recorded) == ["DeleteEndpoint", "DeleteEndpointConfig", "DeleteModel"]
    assert [str(d) for d in denials(recorded)] == []


def test_the_pipeline_may_mark_what_it_keeps(aws: Aws) -> None:
    # Given a run whose spec keeps its endpoint
    state = deployed("h-keep", keep_endpoint=True)
    # When teardown marks the endpoint, its config and model kept
    invoke(teardown_endpoint, state)
    recorded = RECORDER.peek()
    # Then each mark is an AddTags on a managed resource, and all are allowed
    assert charged_changes(recorded) == ["AddTags"] * 3
    assert [str(d) for d in denials(recorded)] == []


def test_the_pipeline_may_not_delete_a_deployed_resource_whose_managed_tag_is_gone(aws: Aws) -> None:
    # Given a deployed run whose endpoint lost its managed tag
    state = deployed("h-untagged")
    assert state.deploy is not None
    endpoint = aws.sagemaker.describe_endpoint(EndpointName=state.deploy.endpoint_name)["EndpointArn"]
    aws.sagemaker.delete_tags(ResourceArn=endpoint, TagKeys=[naming.TAG_MANAGED])
    # When teardown deletes the run's resources
    invoke(teardown_endpoint, state)
    # Then IAM would refuse exactly the endpoint's delete (taken here: the contract check would fail the test)
    found = denials(RECORDER.take())
    assert [(d.access.action, d.access.resource) for d in found] == [
        ("sagemaker:DeleteEndpoint", WHERE.sagemaker("endpoint", state.deploy.endpoint_name))
    ]


def test_only_the_runs_tagged_alarms_and_application_auto_scalings_own_may_be_deleted() -> None:
    def cloudwatch(function: str | None, operation: str, **params: Any) -> Request:
        return Request(function, "cloudwatch", operation, REGION, params, SETTINGS_ENV)

    alarm = {"MetricName": "NoCapacityInvocationFailures", "Namespace": "AWS/SageMaker"}
    tracking = "TargetTracking-inference-component/db-run-1-a1-ic0-AlarmHigh-0000"
    recorded = [
        # Given the run's tagged no-capacity alarm, an untagged db-* alarm and a target-tracking alarm
        cloudwatch(None, "PutMetricAlarm", AlarmName="db-run-1-a1-ic0-no-capacity", Tags=run_tags(), **alarm),
        cloudwatch(None, "PutMetricAlarm", AlarmName="db-run-1-a1-ic1-no-capacity", **alarm),
        # When teardown deletes all three
        cloudwatch(TEARDOWN, "DeleteAlarms", AlarmNames=["db-run-1-a1-ic0-no-capacity"]),
        cloudwatch(TEARDOWN, "DeleteAlarms", AlarmNames=["db-run-1-a1-ic1-no-capacity"]),
        cloudwatch(TEARDOWN, "DeleteAlarms", AlarmNames=[tracking]),
    ]
    # Then only the untagged db-* alarm is refused
    assert [d.access.resource for d in denials(recorded)] == [WHERE.alarm("db-run-1-a1-ic1-no-capacity")]
