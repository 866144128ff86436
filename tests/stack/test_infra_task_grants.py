"""The grants infra/grants.py derives from a state machine's Task states, resolved without a synth: a
processing-job task gets only project jobs, and a Task with no permission rule stops the synth."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.infra import as_list, flat


def grants_for(definition: dict[str, Any]) -> list[dict[str, Any]]:
    """The statements infra/grants.py derives for a definition, resolved (no synth needed)."""
    import aws_cdk as cdk
    from aws_cdk import aws_iam as iam

    from infra.grants import definition_statements

    stack = cdk.Stack(cdk.App(), "Probe")
    role = iam.Role(stack, "SageMaker", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    statements = definition_statements(
        definition, stack=stack, function_arns={"ProbeFunctionArn": "arn:probe"}, sagemaker_role=role
    )
    return [stack.resolve(s.to_statement_json()) for s in statements]


def test_a_processing_job_task_may_create_follow_and_stop_only_project_jobs() -> None:
    # Given a definition that runs a SageMaker processing job with the .sync integration
    definition = {
        "StartAt": "RunGpuBenchmark",
        "States": {
            "RunGpuBenchmark": {
                "Type": "Task",
                "Resource": "arn:aws:states:::sagemaker:createProcessingJob.sync",
                "End": True,
            }
        },
    }
    # When its role's statements are derived
    statements = grants_for(definition)
    by_action = {action: s for s in statements for action in as_list(s["Action"])}
    # Then the job actions are limited to db-* jobs, the role may be passed only to SageMaker, and
    # the managed rule that reports the job's end may be created
    assert flat(by_action["sagemaker:CreateProcessingJob"]["Resource"]).endswith(":processing-job/db-*")
    assert {"sagemaker:DescribeProcessingJob", "sagemaker:StopProcessingJob"} <= set(by_action)
    assert by_action["iam:PassRole"]["Condition"] == {
        "StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}
    }
    assert flat(by_action["events:PutRule"]["Resource"]).endswith(
        ":rule/StepFunctionsGetEventsForSageMakerProcessingJobsRule"
    )


def test_a_task_resource_without_a_permission_rule_stops_the_synth() -> None:
    definition = {
        "StartAt": "Outer",
        "States": {
            "Outer": {
                "Type": "Map",
                "ItemProcessor": {
                    "StartAt": "Query",
                    "States": {
                        "Query": {
                            "Type": "Task",
                            "Resource": "arn:aws:states:::athena:startQueryExecution",
                            "End": True,
                        }
                    },
                },
                "End": True,
            }
        },
    }
    with pytest.raises(ValueError, match="Outer/Query: no permission rule for Task resource"):
        grants_for(definition)
