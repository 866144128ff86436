"""``deploybench definition``: a state machine's definition (ASL), resolved for the deployed stack or as built."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from workflows.cli.options import JsonOption, ProfileOption, RegionOption, StackOption
from workflows.cli.output import aws_session, fail, guarded, stack_outputs
from workflows.naming import STACK_NAME

if TYPE_CHECKING:
    from boto3.session import Session


def module_name(name: str) -> str:
    """``deploy_pipeline``, ``deploybench-deploy-pipeline`` or its ARN -> ``deploy_pipeline``."""
    import state_machines
    from workflows.naming import state_machine_name

    by_deployed = {state_machine_name(n): n for n in state_machines.names()}
    bare = name.rsplit(":", 1)[-1] if name.startswith("arn:") else name
    if bare in state_machines.names():
        return bare
    if bare in by_deployed:
        return by_deployed[bare]
    choices = [*state_machines.names(), *by_deployed]
    fail(f"unknown state machine {name!r}.", fix=f"choose one of {', '.join(choices)}")


def deployed_values(session: Session, stack_name: str) -> dict[str, str]:
    """Every placeholder's value in the deployed stack: its functions' and state machines' ARNs.

    Functions are found by their fixed names among the stack's resources (``deploybench-convert-to-onnx``
    for ``${ConvertToOnnxFunctionArn}``), state machines by theirs; the partition, region and account come
    from the stack's own ARN.
    """
    import state_machines
    from workflows.aws.clients import paginate
    from workflows.naming import function_name, state_machine_name

    stack_outputs(session, stack_name)  # a missing stack exits 2 here, naming it
    cloudformation = session.client("cloudformation")
    stack_arn = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]["StackId"]
    partition, region, account = (stack_arn.split(":")[i] for i in (1, 3, 4))
    resources = paginate(
        cloudformation, "list_stack_resources", "StackResourceSummaries", StackName=stack_name
    )
    functions = {r["PhysicalResourceId"] for r in resources if r["ResourceType"] == "AWS::Lambda::Function"}
    machines = {
        r["PhysicalResourceId"].rsplit(":", 1)[-1]: r["PhysicalResourceId"]
        for r in resources
        if r["ResourceType"] == "AWS::StepFunctions::StateMachine"
    }
    values = {state_machines.START_EXECUTION_SYNC: state_machines.AWS_START_EXECUTION_SYNC}
    for row in state_machines.FUNCTIONS:
        name = function_name(row.placeholder)
        if name in functions:
            values[row.placeholder] = f"arn:{partition}:lambda:{region}:{account}:function:{name}"
    for machine in state_machines.names():
        deployed = machines.get(state_machine_name(machine))
        if deployed:
            values[state_machines.state_machine_placeholder(machine)] = deployed
    return values


def resolved(definition: str, values: dict[str, str], *, stack_name: str, region: str | None) -> str:
    """The definition with every ``${...}`` placeholder replaced, or exit 2 naming the ones the stack lacks."""
    import state_machines

    missing = sorted(state_machines.placeholders(definition) - set(values))
    if missing:
        fail(
            f"stack {stack_name} in {region} has nothing for {', '.join('${' + m + '}' for m in missing)}.",
            fix="deploy the current version of the stack (`npx aws-cdk@2 deploy`), or pass its --stack-name",
        )
    for placeholder, value in values.items():
        definition = definition.replace("${" + placeholder + "}", value)
    return definition


@guarded
def definition(
    name: Annotated[
        str,
        typer.Argument(
            metavar="NAME",
            help="State machine: deploy_pipeline, benchmark_sweep, redeploy_pipeline, or its deployed name "
            "(deploybench-deploy-pipeline).",
        ),
    ] = "deploy_pipeline",
    resolve: Annotated[
        bool,
        typer.Option(
            "--resolve", help="Substitute the deployed function and state machine ARNs (from --stack-name)."
        ),
    ] = False,
    stack_name: StackOption = STACK_NAME,  # read with --resolve
    region: RegionOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print a state machine's ASL definition (JSON): with ${...FunctionArn} placeholders, or --resolve'd."""
    import state_machines

    text = state_machines.definition_json(module_name(name))
    if resolve:
        session = aws_session(region, profile)
        values = deployed_values(session, stack_name)
        text = resolved(text, values, stack_name=stack_name, region=session.region_name)
    sys.stdout.write(json.dumps(json.loads(text), indent=2) + "\n" if as_json else text + "\n")
