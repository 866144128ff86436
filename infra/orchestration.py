"""The state machines, from the same definitions the local engine runs.

Each definition is the JSON string ``state_machines.definition_json(name)`` with its
``${...}`` placeholders left in; CloudFormation substitutes them (``DefinitionSubstitutions``):
function ARNs from FUNCTIONS, other state machines' ARNs, and the ``.sync:2`` integration that
the local engine replaces with a function of its own.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.constants import state_machine_name
from infra.grants import definition_statements
from state_machines import (
    AWS_START_EXECUTION_SYNC,
    START_EXECUTION_SYNC,
    creation_order,
    definition,
    definition_json,
    placeholders,
    state_machine_placeholder,
)

LOG_RETENTION = logs.RetentionDays.THREE_MONTHS


def construct_id(name: str) -> str:
    """``deploy_pipeline`` -> ``DeployPipeline``."""
    return "".join(word.title() for word in name.split("_"))


class StateMachines(Construct):
    """``self.by_name[name]`` for every name in ``state_machines.names()``."""

    def __init__(
        self,
        scope: Construct,
        id: str,  # noqa: A002 - the construct id, as CDK names it
        *,
        functions: dict[str, lambda_.IFunction],
        sagemaker_role: iam.IRole,
    ) -> None:
        super().__init__(scope, id)
        self.functions = functions
        self.sagemaker_role = sagemaker_role
        self.by_name: dict[str, sfn.StateMachine] = {}
        # A machine that starts another is created after it: its ARN is substituted into the parent.
        for name in creation_order():
            self.by_name[name] = self._build_machine(name)

    def substitutions(self, name: str) -> dict[str, str]:
        """A value for every placeholder the definition uses.

        Raises:
            KeyError: a placeholder that is neither a function, a state machine, nor the child integration.
        """
        machines = {state_machine_placeholder(n): m.state_machine_arn for n, m in self.by_name.items()}
        values: dict[str, str] = {}
        for placeholder in sorted(placeholders(definition_json(name))):
            if placeholder in self.functions:
                values[placeholder] = self.functions[placeholder].function_arn
            elif placeholder in machines:
                values[placeholder] = machines[placeholder]
            elif placeholder == START_EXECUTION_SYNC:
                values[placeholder] = AWS_START_EXECUTION_SYNC
            else:
                raise KeyError(f"{name}: nothing to substitute for ${{{placeholder}}}")
        return values

    def _build_machine(self, name: str) -> sfn.StateMachine:
        base = construct_id(name)
        role = iam.Role(
            self,
            f"{base}Role",
            assumed_by=iam.ServicePrincipal("states.amazonaws.com"),
            description=f"deploybench {state_machine_name(name)} state machine",
        )
        for statement in definition_statements(
            definition(name),
            stack=Stack.of(self),
            function_arns={p: f.function_arn for p, f in self.functions.items()},
            sagemaker_role=self.sagemaker_role,
        ):
            role.add_to_policy(statement)
        log_group = logs.LogGroup(
            self,
            f"{base}Logs",
            log_group_name=f"/aws/vendedlogs/states/{state_machine_name(name)}",
            retention=LOG_RETENTION,
            removal_policy=RemovalPolicy.DESTROY,
        )
        return sfn.StateMachine(
            self,
            base,
            state_machine_name=state_machine_name(name),
            state_machine_type=sfn.StateMachineType.STANDARD,
            definition_body=sfn.DefinitionBody.from_string(definition_json(name)),
            definition_substitutions=self.substitutions(name),
            role=role,
            tracing_enabled=True,
            logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=True),
        )
