"""Least privilege, checked on the synthesized policies; cdk-nag's AwsSolutions findings all acknowledged with reasons."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pytest

import state_machines
from infra.permissions import RESERVATION_READS
from infra.unscopable import UNSCOPABLE
from tests.support.infra import Synthesized, as_list, flat, policy_statements, synthesize
from workflows.naming import function_name, state_machine_name


@pytest.fixture(scope="module")
def synth() -> Synthesized:
    return synthesize()


def allowed(synth: Synthesized) -> list[tuple[str, list[str], list[str], dict[str, Any]]]:
    """(owner, actions, resources, conditions) of every Allow statement of every identity policy."""
    out = []
    for owner, statement in policy_statements(synth):
        if statement["Effect"] == "Allow":
            resources = [flat(r) for r in as_list(statement["Resource"])]
            out.append((owner, as_list(statement["Action"]), resources, statement.get("Condition", {})))
    return out


def role_of(synth: Synthesized, logical_id: str) -> str:
    """The role a function or state machine runs as."""
    props = synth.props(logical_id)
    return str((props.get("Role") or props["RoleArn"])["Fn::GetAtt"][0])


def statements_of_role(synth: Synthesized, role: str) -> list[tuple[list[str], list[str], dict[str, Any]]]:
    found = []
    for owner, actions, resources, conditions in allowed(synth):
        roles = [r["Ref"] for r in synth.props(owner).get("Roles", [])] if owner != role else [role]
        if role in roles:
            found.append((actions, resources, conditions))
    return found


def actions_of_role(synth: Synthesized, role: str) -> dict[str, set[str]]:
    actions: dict[str, set[str]] = defaultdict(set)
    for names, resources, _ in statements_of_role(synth, role):
        for action in names:
            actions[action].update(resources)
    return actions


def function_id(synth: Synthesized, placeholder: str) -> str:
    return next(
        k
        for k, v in synth.of_type("AWS::Lambda::Function").items()
        if v["Properties"]["FunctionName"] == function_name(placeholder)
    )


def machine_id(synth: Synthesized, name: str) -> str:
    return next(
        k
        for k, v in synth.of_type("AWS::StepFunctions::StateMachine").items()
        if v["Properties"]["StateMachineName"] == state_machine_name(name)
    )


def test_no_identity_policy_allows_a_wildcard_action(synth: Synthesized) -> None:
    wildcards = [(owner, a) for owner, actions, _, _ in allowed(synth) for a in actions if "*" in a]
    assert wildcards == []


def test_resource_star_only_for_actions_without_resource_level_permissions(synth: Synthesized) -> None:
    offending = [
        (owner, action)
        for owner, actions, resources, _ in allowed(synth)
        if "*" in resources
        for action in actions
        if action not in UNSCOPABLE
    ]
    assert offending == []


def test_resource_policies_allow_no_wildcard_action_but_the_key_administrators(synth: Synthesized) -> None:
    # Resource policies: bucket policies (Deny only), queue and topic policies, and the KMS keys' policies
    # (the alert topic's and the artifacts'), whose account-root kms:* statement keeps each key
    # manageable (IAM then decides; AWS's default).
    found = []
    for resource in synth.resources.values():
        document = resource.get("Properties", {}).get("PolicyDocument") or resource.get("Properties", {}).get(
            "KeyPolicy"
        )
        if not document or resource["Type"] == "AWS::IAM::Policy":
            continue
        for statement in document["Statement"]:
            if statement["Effect"] == "Allow" and any("*" in a for a in as_list(statement["Action"])):
                found.append((resource["Type"], flat(statement["Principal"].get("AWS", ""))))
    assert found == [("AWS::KMS::Key", "arn:<AWS::Partition>:iam::<AWS::AccountId>:root")] * 2


def test_sagemaker_actions_are_scoped_to_the_project_name_prefix(synth: Synthesized) -> None:
    for owner, actions, resources, _ in allowed(synth):
        scoped = [
            a
            for a in actions
            if a.startswith("sagemaker:") and a not in UNSCOPABLE and a not in RESERVATION_READS
        ]
        if scoped:
            assert all(r.split(":sagemaker:")[-1].split("/")[-1] == "db-*" for r in resources), (
                owner,
                resources,
            )


def test_the_users_reservations_are_only_described_and_only_by_check_spec(synth: Synthesized) -> None:
    # Given the statements that name the user's ML reservations (not db-* resources)
    found = [
        (owner, actions, resources)
        for owner, actions, resources, _ in allowed(synth)
        if set(actions) & set(RESERVATION_READS)
    ]
    # Then one statement, CheckSpec's, may only describe them, on their own resource types
    assert len(found) == 1
    owner, actions, resources = found[0]
    assert "CheckSpec" in owner
    assert sorted(actions) == sorted(RESERVATION_READS)
    assert [r.rsplit(":", 1)[-1] for r in resources] == ["training-plan/*"]


def test_sagemaker_creates_require_the_managed_tag(synth: Synthesized) -> None:
    creates = [
        conditions
        for _, actions, _, conditions in allowed(synth)
        if any(a.startswith("sagemaker:Create") for a in actions)
    ]
    assert creates
    for conditions in creates:
        assert conditions == {"StringEquals": {"aws:RequestTag/deploybench:managed": "true"}}


def test_sagemaker_deletes_updates_and_stops_require_the_managed_tag_on_the_resource(
    synth: Synthesized,
) -> None:
    changes = [
        (owner, conditions)
        for owner, actions, _, conditions in allowed(synth)
        if any(a.startswith(("sagemaker:Delete", "sagemaker:Update", "sagemaker:Stop")) for a in actions)
    ]
    assert changes
    for owner, conditions in changes:
        assert conditions == {"StringEquals": {"aws:ResourceTag/deploybench:managed": "true"}}, owner


def test_sagemaker_tagging_needs_the_managed_tag_in_the_request_or_on_the_resource(
    synth: Synthesized,
) -> None:
    tagging = [conditions for _, actions, _, conditions in allowed(synth) if "sagemaker:AddTags" in actions]
    assert tagging
    for conditions in tagging:
        assert conditions in (
            {"StringEquals": {"aws:RequestTag/deploybench:managed": "true"}},
            {
                "StringEquals": {"aws:ResourceTag/deploybench:managed": "true"},
                "ForAllValues:StringEquals": {"aws:TagKeys": ["deploybench:keep"]},
            },
        )


def test_pass_role_only_hands_the_sagemaker_role_to_sagemaker(synth: Synthesized) -> None:
    [sagemaker_role] = [
        k
        for k, v in synth.of_type("AWS::IAM::Role").items()
        if "sagemaker.amazonaws.com" in json.dumps(v["Properties"]["AssumeRolePolicyDocument"])
    ]
    passes = [
        (resources, conditions)
        for _, actions, resources, conditions in allowed(synth)
        if "iam:PassRole" in actions
    ]
    assert passes
    for resources, conditions in passes:
        assert resources == [f"<{sagemaker_role}.Arn>"]
        assert conditions == {"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}}


@pytest.mark.parametrize("name", state_machines.names())
def test_state_machine_invokes_exactly_the_functions_of_its_definition(synth: Synthesized, name: str) -> None:
    # Given the functions the definition names
    used = state_machines.placeholders(state_machines.definition_json(name))
    expected = {f"<{function_id(synth, p)}.Arn>" for p in used if p.endswith("FunctionArn")}
    # When reading what the machine's role may invoke
    actions = actions_of_role(synth, role_of(synth, machine_id(synth, name)))
    # Then it is exactly those, with nothing else from Lambda
    assert actions.get("lambda:InvokeFunction", set()) == expected
    assert {a for a in actions if a.startswith("lambda:")} <= {"lambda:InvokeFunction"}


@pytest.mark.parametrize("name", ["benchmark_sweep", "redeploy_pipeline"])
def test_parents_start_and_follow_only_the_deploy_pipeline(synth: Synthesized, name: str) -> None:
    actions = actions_of_role(synth, role_of(synth, machine_id(synth, name)))
    child = state_machine_name("deploy_pipeline")
    assert [r.split(":")[-1] for r in actions["states:StartExecution"]] == [child]
    assert [r.split(":execution:")[-1] for r in actions["states:DescribeExecution"]] == [f"{child}:*"]
    assert actions["states:StopExecution"] == actions["states:DescribeExecution"]
    assert [r.split(":rule/")[-1] for r in actions["events:PutRule"]] == [
        "StepFunctionsGetEventsForStepFunctionsExecutionRule"
    ]


def test_deploy_pipeline_cannot_start_executions(synth: Synthesized) -> None:
    actions = actions_of_role(synth, role_of(synth, machine_id(synth, "deploy_pipeline")))
    assert not [a for a in actions if a.startswith("states:")]


def test_orchestration_functions_get_only_what_they_need(synth: Synthesized) -> None:
    def actions(placeholder: str) -> set[str]:
        granted = actions_of_role(synth, role_of(synth, function_id(synth, placeholder)))
        # Every function may write its own logs and traces.
        return set(granted) - {
            "logs:CreateLogStream",
            "logs:PutLogEvents",
            "xray:PutTraceSegments",
            "xray:PutTelemetryRecords",
        }

    assert actions("PlanSweepFunctionArn") == set()
    # A describe never creates: placing components (and their scaling) is its own state's grant
    assert actions("DescribeEndpointFunctionArn") == {
        "sagemaker:DescribeEndpoint",
        "sagemaker:InvokeEndpoint",
    }
    assert {
        "sagemaker:CreateInferenceComponent",
        "application-autoscaling:RegisterScalableTarget",
        "cloudwatch:PutMetricAlarm",
    } <= actions("PlaceInferenceComponentsFunctionArn")
    assert actions("StartRedeployFunctionArn") == {"states:StartExecution"}
    assert actions("CheckRedeployQueueFunctionArn") == {"states:ListExecutions", "states:DescribeExecution"}
    janitor = actions("JanitorFunctionArn")
    assert not {a for a in janitor if a.startswith("sagemaker:Create")}
    assert {"sagemaker:DeleteEndpoint", "sagemaker:StopProcessingJob", "sns:Publish"} <= janitor
    # Scale to zero's leftovers: targets, policies and alarms go with their component (never created)
    assert {
        "application-autoscaling:DeleteScalingPolicy",
        "application-autoscaling:DeregisterScalableTarget",
        "cloudwatch:DeleteAlarms",
        "cloudwatch:ListTagsForResource",
        "sagemaker:DescribeInferenceComponent",
    } <= janitor
    assert not {a for a in janitor if a.startswith(("application-autoscaling:Register", "cloudwatch:Put"))}


def test_the_sagemaker_role_reads_artifacts_writes_results_and_deletes_nothing(synth: Synthesized) -> None:
    [role] = [
        k
        for k, v in synth.of_type("AWS::IAM::Role").items()
        if "sagemaker.amazonaws.com" in json.dumps(v["Properties"]["AssumeRolePolicyDocument"])
    ]
    actions = actions_of_role(synth, role)
    assert any(r.endswith("/artifacts/*") for r in actions["s3:GetObject"])
    assert {r.split(">")[-1] for r in actions["s3:PutObject"]} == {"/results/*"}
    # It deletes no data nor run resource; only the network interfaces SageMaker made for its containers
    assert sorted(a for a in actions if "Delete" in a) == [
        "ec2:DeleteNetworkInterface",
        "ec2:DeleteNetworkInterfacePermission",
    ]
    # InvokeEndpoint is authorised on the endpoint, and with InferenceComponentName on the component too
    assert actions["sagemaker:InvokeEndpoint"] and all(
        r.endswith((":endpoint/db-*", ":inference-component/db-*"))
        for r in actions["sagemaker:InvokeEndpoint"]
    )


def test_nag_findings_are_all_acknowledged_each_with_a_reason(synth: Synthesized) -> None:
    # The synth above ran the AwsSolutions plugin; an unacknowledged finding would have failed it.
    report = json.loads((synth.outdir / "validation-report.json").read_text())
    assert [v for plugin in report["pluginReports"] for v in plugin.get("violations", [])] == []
    # And every acknowledgement has a reason a reviewer can judge, recorded in the assembly
    recorded = {
        key: reason
        for entries in synth.metadata.values()
        for entry in entries
        if entry["type"] == "aws:cdk:acknowledged-rules"
        for key, reason in entry["data"].items()
    }
    for ack in synth.acks:
        assert len(ack.reason) >= 40, ack
        assert recorded[f"AwsSolutions::{ack.finding}"] == ack.reason


def test_every_wildcard_acknowledgement_matches_a_resource_in_use(synth: Synthesized) -> None:
    # A stale acknowledgement would silently cover a future, different wildcard.
    in_use = {r for _, _, resources, _ in allowed(synth) for r in resources}
    for ack in synth.acks:
        if ack.finding.startswith("AwsSolutions-IAM5[Resource::"):
            assert ack.finding.removeprefix("AwsSolutions-IAM5[Resource::").removesuffix("]") in in_use, ack


def test_an_unacknowledged_finding_fails_the_synth(tmp_path: Any) -> None:
    import aws_cdk as cdk
    from aws_cdk import aws_sqs as sqs
    from cdk_nag import AwsSolutionsChecks

    # Given an app with the same checks and a queue that breaks an AwsSolutions rule (no TLS-only policy)
    app = cdk.App(outdir=str(tmp_path))
    stack = cdk.Stack(app, "Probe")
    sqs.Queue(stack, "Queue")
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    # Then synthesizing it fails
    with pytest.raises(RuntimeError, match="ValidationFailed"):
        app.synth()


def test_a_stopped_execution_is_torn_down_by_a_rule_with_the_teardowns_own_grants(synth: Synthesized) -> None:
    # Given the rule on the state machines' status changes
    from workflows.stops.teardown import DETAIL_TYPE, STOPPED_STATUSES

    [rule] = [
        r["Properties"]
        for r in synth.of_type("AWS::Events::Rule").values()
        if r["Properties"].get("EventPattern", {}).get("detail-type") == [DETAIL_TYPE]
    ]
    pattern = rule["EventPattern"]
    # Then it matches ABORTED and TIMED_OUT of every state machine of the stack, and nothing else
    assert pattern["source"] == ["aws.states"]
    assert sorted(pattern["detail"]["status"]) == sorted(STOPPED_STATUSES)
    machines = {
        f"<{machine_id(synth, name)}>" for name in ("deploy_pipeline", "benchmark_sweep", "redeploy_pipeline")
    }
    assert {flat(arn) for arn in pattern["detail"]["stateMachineArn"]} == machines
    # And its one target is the stopped-execution teardown, with retries and the dead-letter queue
    [target] = rule["Targets"]
    teardown_id = function_id(synth, "TeardownStoppedExecutionFunctionArn")
    assert target["Arn"] == {"Fn::GetAtt": [teardown_id, "Arn"]}
    assert target["RetryPolicy"]["MaximumRetryAttempts"] == 8 and "DeadLetterConfig" in target
    # And EventBridge may invoke it: a Lambda permission for events.amazonaws.com from that rule
    permissions = [
        p["Properties"]
        for p in synth.of_type("AWS::Lambda::Permission").values()
        if p["Properties"]["Principal"] == "events.amazonaws.com"
        and p["Properties"]["FunctionName"] == {"Fn::GetAtt": [teardown_id, "Arn"]}
    ]
    assert permissions and permissions[0]["Action"] == "lambda:InvokeFunction"

    # And the function may do exactly what the pipeline's teardown may (each writes its own log group)
    def grants(placeholder: str) -> dict[str, set[str]]:
        granted = actions_of_role(synth, role_of(synth, function_id(synth, placeholder)))
        return {action: resources for action, resources in granted.items() if not action.startswith("logs:")}

    assert grants("TeardownStoppedExecutionFunctionArn") == grants("TeardownEndpointFunctionArn")
