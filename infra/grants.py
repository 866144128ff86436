"""The state machine role's permissions, derived from its definition.

A definition given as a string gets no grants from CDK, so every Task is read here: a
``${...FunctionArn}`` resource may invoke exactly that function; a child execution
(``${StartExecutionSyncResource}``) may start exactly the state machine its Parameters name,
follow and stop that machine's executions, and manage the managed rule Step Functions uses to
learn that a ``.sync`` child ended; a SageMaker processing job integration may create, follow
and stop ``db-*`` jobs and pass the SageMaker role. Any other resource stops the synth with the
state that uses it, so a new kind of Task cannot deploy without its permissions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_iam as iam

from infra.constants import PREFIX, state_machine_name
from infra.ownership import changes, creates
from state_machines import START_EXECUTION_SYNC, names, state_machine_placeholder

# Step Functions creates these rules in the account to be told that a .sync child has ended.
SYNC_RULES = {
    "states": "StepFunctionsGetEventsForStepFunctionsExecutionRule",
    "sagemaker-processing": "StepFunctionsGetEventsForSageMakerProcessingJobsRule",
}
PROCESSING_JOB = "arn:aws:states:::sagemaker:createProcessingJob"


def tasks(states: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every Task state, in Map item processors and Parallel branches too, with its path."""
    for name, state in states.items():
        where = f"{path}{name}"
        if state["Type"] == "Task":
            yield where, state
        processor = state.get("ItemProcessor") or state.get("Iterator")
        if processor:
            yield from tasks(processor["States"], f"{where}/")
        for index, branch in enumerate(state.get("Branches", [])):
            yield from tasks(branch["States"], f"{where}[{index}]/")


def _placeholder(value: str) -> str | None:
    return value[2:-1] if value.startswith("${") and value.endswith("}") else None


def _child_name(parameters: Mapping[str, Any], where: str) -> str:
    target = _placeholder(str(parameters.get("StateMachineArn", ""))) or ""
    by_placeholder = {state_machine_placeholder(n): n for n in names()}
    if target not in by_placeholder:
        raise ValueError(
            f"{where}: a child execution must name its state machine as ${{<Name>StateMachineArn}}; "
            f"got {parameters.get('StateMachineArn')!r}"
        )
    return by_placeholder[target]


def _rule_arn(stack: Stack, rule: str) -> str:
    return stack.format_arn(service="events", resource="rule", resource_name=rule)


def _child_statements(stack: Stack, child: str) -> list[iam.PolicyStatement]:
    machine = stack.format_arn(
        service="states",
        resource="stateMachine",
        resource_name=state_machine_name(child),
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )
    executions = stack.format_arn(
        service="states",
        resource="execution",
        resource_name=f"{state_machine_name(child)}:*",
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )
    return [
        iam.PolicyStatement(actions=["states:StartExecution"], resources=[machine]),
        iam.PolicyStatement(
            actions=["states:DescribeExecution", "states:StopExecution"], resources=[executions]
        ),
        iam.PolicyStatement(
            actions=["events:PutTargets", "events:PutRule", "events:DescribeRule"],
            resources=[_rule_arn(stack, SYNC_RULES["states"])],
        ),
    ]


def _processing_job_statements(
    stack: Stack, sagemaker_role: iam.IRole, sync: bool
) -> list[iam.PolicyStatement]:
    jobs = stack.format_arn(service="sagemaker", resource="processing-job", resource_name=f"{PREFIX}-*")
    # The task's job must be tagged deploybench's, and only such a job may be stopped (infra/ownership.py).
    statements = [
        creates([jobs], ["sagemaker:CreateProcessingJob", "sagemaker:AddTags"]),
        iam.PolicyStatement(
            actions=["sagemaker:DescribeProcessingJob", "sagemaker:ListTags"], resources=[jobs]
        ),
        changes([jobs], ["sagemaker:StopProcessingJob"]),
        iam.PolicyStatement(
            actions=["iam:PassRole"],
            resources=[sagemaker_role.role_arn],
            conditions={"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}},
        ),
    ]
    if sync:
        statements.append(
            iam.PolicyStatement(
                actions=["events:PutTargets", "events:PutRule", "events:DescribeRule"],
                resources=[_rule_arn(stack, SYNC_RULES["sagemaker-processing"])],
            )
        )
    return statements


def definition_statements(
    definition: Mapping[str, Any],
    *,
    stack: Stack,
    function_arns: Mapping[str, str],
    sagemaker_role: iam.IRole,
) -> list[iam.PolicyStatement]:
    """Least-privilege statements for a state machine running ``definition``.

    Raises:
        ValueError: a Task uses a resource this module has no rule for (naming the state).
    """
    invoked: dict[str, str] = {}
    statements: list[iam.PolicyStatement] = []
    children: set[str] = set()
    processing: set[bool] = set()
    for where, state in tasks(definition["States"]):
        resource = str(state["Resource"])
        placeholder = _placeholder(resource) or ""
        if placeholder in function_arns:
            invoked[placeholder] = function_arns[placeholder]
        elif placeholder == START_EXECUTION_SYNC:
            children.add(_child_name(state.get("Parameters", {}), where))
        elif resource.startswith(PROCESSING_JOB):
            processing.add(resource.endswith(".sync"))
        else:
            raise ValueError(
                f"{where}: no permission rule for Task resource {resource!r}; add one in infra/grants.py"
            )
    if invoked:
        statements.append(
            iam.PolicyStatement(
                actions=["lambda:InvokeFunction"], resources=[invoked[p] for p in sorted(invoked)]
            )
        )
    for child in sorted(children):
        statements += _child_statements(stack, child)
    if processing:
        statements += _processing_job_statements(stack, sagemaker_role, sync=True in processing)
    return statements
