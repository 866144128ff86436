"""The deployed state machines run the same definitions as the local engine, and the template lints clean."""

from __future__ import annotations

import json
from typing import Any

import pytest

import state_machines
from tests.support.infra import FAKE_ACCOUNT, FAKE_REGION, Synthesized, resolved_definition, synthesize
from workflows.naming import function_name, state_machine_name


@pytest.fixture(scope="module")
def synth() -> Synthesized:
    return synthesize()


def machine_id(synth: Synthesized, name: str) -> str:
    return next(
        k
        for k, v in synth.of_type("AWS::StepFunctions::StateMachine").items()
        if v["Properties"]["StateMachineName"] == state_machine_name(name)
    )


def local_substitutions() -> dict[str, str]:
    """What each placeholder must become on AWS: the function named for it, the machine, the .sync:2 integration."""
    values = {
        f.placeholder: f"arn:aws:lambda:{FAKE_REGION}:{FAKE_ACCOUNT}:function:{function_name(f.placeholder)}"
        for f in state_machines.FUNCTIONS
    }
    values |= {
        state_machines.state_machine_placeholder(n): (
            f"arn:aws:states:{FAKE_REGION}:{FAKE_ACCOUNT}:stateMachine:{state_machine_name(n)}"
        )
        for n in state_machines.names()
    }
    values[state_machines.START_EXECUTION_SYNC] = state_machines.AWS_START_EXECUTION_SYNC
    return values


@pytest.mark.parametrize("name", state_machines.names())
def test_synthesized_definition_equals_the_local_one_after_substitution(
    synth: Synthesized, name: str
) -> None:
    # Given the template's definition with CloudFormation's substitutions applied
    deployed = json.loads(resolved_definition(synth, machine_id(synth, name)))
    # When the local definition is rendered with the names the stack gives each function and machine
    local = json.loads(state_machines.render(name, local_substitutions()))
    # Then they are the same document
    assert deployed == local
    # And no placeholder is left
    assert "${" not in json.dumps(deployed)


@pytest.mark.parametrize("name", state_machines.names())
def test_each_placeholder_is_substituted_by_the_function_with_that_handler(
    synth: Synthesized, name: str
) -> None:
    handlers = {f.placeholder: f.handler for f in state_machines.FUNCTIONS}
    substitutions = synth.props(machine_id(synth, name))["DefinitionSubstitutions"]
    for placeholder, value in substitutions.items():
        if placeholder in handlers:
            function = synth.props(value["Fn::GetAtt"][0])
            handler = function.get("Handler") or function["ImageConfig"]["Command"][0]
            assert handler == handlers[placeholder], placeholder


def test_child_executions_use_the_sync_2_integration_on_aws(synth: Synthesized) -> None:
    sweep = json.loads(resolved_definition(synth, machine_id(synth, "benchmark_sweep")))
    task = sweep["States"]["RunMatrix"]["ItemProcessor"]["States"]["RunDeployPipeline"]
    assert task["Resource"] == "arn:aws:states:::states:startExecution.sync:2"
    assert task["Parameters"]["StateMachineArn"].endswith(
        f":stateMachine:{state_machine_name('deploy_pipeline')}"
    )


def linted_template(synth: Synthesized) -> dict[str, Any]:
    """The template with every DefinitionString resolved, so cfn-lint's ASL schema check (E3601) applies."""
    template = json.loads(json.dumps(synth.template))
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] == "AWS::StepFunctions::StateMachine":
            resource["Properties"]["DefinitionString"] = resolved_definition(synth, logical_id)
            resource["Properties"].pop("DefinitionSubstitutions", None)
    return template


# CDK makes each function and state machine depend on its role and on the role's default policy (so
# the policy exists before the first call); the role half duplicates the Role GetAtt: W3005 only.
IGNORED_RULES = ["W3005"]
# cfn-lint's copy of the IAM actions predates inference routers (botocore 1.44 has them; the developer
# guide's router security page names the actions): W3037 on exactly these is not a finding.
ROUTER_ACTIONS = (
    "listinferencerouters",
    "describeinferencerouter",
    "deleteinferencerouter",
    "createinferencerouter",
    "invokeinferencerouter",
)


def is_finding(match: Any) -> bool:
    text = str(match)
    return not (
        text.startswith("[W3037") and any(f"'{action}' is not one of" in text for action in ROUTER_ACTIONS)
    )


def test_cfn_lint_is_clean_with_the_definitions_resolved(synth: Synthesized) -> None:
    from cfnlint.api import ManualArgs, lint

    # Given the template with resolved state machine definitions
    template = linted_template(synth)
    # When cfn-lint checks it (resource schemas, IAM, and the ASL schema of each definition)
    matches = lint(
        json.dumps(template), config=ManualArgs(regions=[FAKE_REGION], ignore_checks=IGNORED_RULES)
    )
    # Then it reports nothing
    assert [str(m) for m in matches if is_finding(m)] == []


def test_cfn_lint_does_check_the_resolved_definitions(synth: Synthesized) -> None:
    from cfnlint.api import ManualArgs, lint

    # Given the deploy pipeline's resolved definition, broken on purpose, alone in a template
    definition = json.loads(resolved_definition(synth, machine_id(synth, "deploy_pipeline")))
    definition["States"]["WaitForEndpoint"]["Type"] = "Sleep"
    template = {
        "Resources": {
            "Machine": {
                "Type": "AWS::StepFunctions::StateMachine",
                "Properties": {
                    "DefinitionString": json.dumps(definition),
                    "RoleArn": f"arn:aws:iam::{FAKE_ACCOUNT}:role/machine",
                },
            }
        }
    }
    # Then cfn-lint sees it (the clean result above is not a blind spot)
    matches = lint(json.dumps(template), config=ManualArgs(regions=[FAKE_REGION]))
    assert [m.rule.id for m in matches] == ["E3601"]
