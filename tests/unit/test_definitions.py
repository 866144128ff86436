"""Static checks on every state machine definition."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from typing import Any

import pytest

import state_machines
from state_machines.error_names import error_names

FAKE_ARNS = {
    f.placeholder: f"arn:aws:lambda:us-east-1:123456789012:function:{f.placeholder}"
    for f in state_machines.FUNCTIONS
} | {
    state_machines.state_machine_placeholder(n): f"arn:aws:states:us-east-1:123456789012:stateMachine:{n}"
    for n in state_machines.names()
}
FAKE_ARNS[state_machines.START_EXECUTION_SYNC] = state_machines.AWS_START_EXECUTION_SYNC
TEARDOWN = "${TeardownEndpointFunctionArn}"
# Steps that create cloud resources; a machine that calls one directly must tear down on every path.
# (The sweep and the redeploy pipeline only start child deploy pipelines, which do.)
CREATING = ("${ConvertToOnnxFunctionArn}", "${PackArtifactFunctionArn}", "${DeployEndpointFunctionArn}")
CREATORS = [
    n for n in state_machines.names() if any(p in state_machines.definition_json(n) for p in CREATING)
]


def rendered(name: str) -> dict[str, Any]:
    return json.loads(state_machines.render(name, FAKE_ARNS))


def transitions(state: dict[str, Any]) -> list[str]:
    targets = [state.get("Next"), state.get("Default")]
    targets += [choice.get("Next") for choice in state.get("Choices", [])]
    targets += [catcher.get("Next") for catcher in state.get("Catch", [])]
    return [t for t in targets if t]


def is_terminal(state: dict[str, Any]) -> bool:
    return state["Type"] in {"Succeed", "Fail"} or state.get("End", False)


@pytest.mark.parametrize("name", state_machines.names())
def test_statelint_is_clean(name: str, tmp_path: Any) -> None:
    # Given the definition with its placeholders substituted
    path = tmp_path / f"{name}.json"
    path.write_text(state_machines.render(name, FAKE_ARNS))
    # When statelint checks it
    result = subprocess.run([sys.executable, "-m", "statelint", str(path)], capture_output=True, text=True)
    # Then it reports nothing
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("name", state_machines.names())
def test_every_error_name_exists_in_the_error_module(name: str) -> None:
    known = error_names()
    for state_name, state in state_machines.definition(name)["States"].items():
        for rule in state.get("Retry", []) + state.get("Catch", []):
            for error in rule["ErrorEquals"]:
                assert error in known or error.startswith(("States.", "Lambda.")), (
                    f"{state_name}: unknown error {error}"
                )


@pytest.mark.parametrize("name", state_machines.names())
def test_every_state_is_reachable(name: str) -> None:
    definition = state_machines.definition(name)
    states = definition["States"]
    seen, stack = set(), [definition["StartAt"]]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        stack.extend(transitions(states[current]))
    assert seen == set(states), f"unreachable: {set(states) - seen}"


def test_the_deploy_pipeline_creates_resources() -> None:
    assert "deploy_pipeline" in CREATORS


@pytest.mark.parametrize("name", CREATORS)
def test_every_path_after_a_resource_exists_reaches_teardown(name: str) -> None:
    # Given the states from the first one that creates something (every Task after the start may)
    definition = state_machines.definition(name)
    states = definition["States"]
    # When walking every transition without passing through a teardown task
    seen, stack = set(), [definition["StartAt"]]
    escaped = []
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        state = states[current]
        if state.get("Resource") == TEARDOWN:
            continue
        if is_terminal(state):
            escaped.append(current)
        stack.extend(transitions(state))
    # Then no terminal state is reachable without a teardown on the way
    assert escaped == [], f"terminal states reachable without teardown: {escaped}"


def test_a_teardown_failure_still_ends_the_run_with_a_report() -> None:
    states = state_machines.definition("deploy_pipeline")["States"]
    for name, state in states.items():
        if state.get("Resource") == TEARDOWN:
            assert state["Catch"], f"{name} has no Catch"
            assert any(r["ErrorEquals"] == ["ResourceBusy"] for r in state["Retry"]), (
                f"{name} does not retry busy deletes"
            )


@pytest.mark.parametrize("name", state_machines.names())
def test_placeholders_are_known_functions_machines_or_the_child_integration(name: str) -> None:
    used = state_machines.placeholders(state_machines.definition_json(name))
    assert used <= state_machines.all_placeholders()
    with pytest.raises(KeyError, match="no substitution"):
        state_machines.render(name, {})


@pytest.mark.parametrize("function", state_machines.FUNCTIONS, ids=lambda f: f.placeholder)
def test_every_handler_is_importable(function: state_machines.LambdaFunction) -> None:
    module, _, attribute = function.handler.rpartition(".")
    assert callable(getattr(importlib.import_module(module), attribute))


# States that bound a loop: the wait loops raise past their time budgets (wait.timeout_min, the
# job's runtime), and every remediation loop passes the planner, which counts spec.remediation.
BOUNDING = {"DescribeEndpoint", "PlaceInferenceComponents", "DescribeBenchmarkJob", "PlanRemediation"}


def cycles_without(states: dict[str, Any], removed: set[str]) -> list[list[str]]:
    """Cycles of the transition graph once ``removed`` states are taken out (depth-first search)."""
    found: list[list[str]] = []
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            found.append(path[path.index(name) :] + [name])
            return
        if name in done or name in removed:
            return
        for target in transitions(states[name]):
            visit(target, [*path, name])
        done.add(name)

    for name in states:
        visit(name, [])
    return found


def test_every_loop_of_the_deploy_pipeline_is_bounded() -> None:
    # Given the deploy pipeline, which loops back after a remediation
    states = state_machines.definition("deploy_pipeline")["States"]
    assert cycles_without(states, set()), "the remediation and polling loops exist"
    # When the bounding states are taken out of the graph
    cycles = cycles_without(states, BOUNDING)
    # Then no cycle is left: every loop passes a state that ends it
    assert cycles == []


def test_remediation_routes_reach_the_step_they_repeat() -> None:
    # Given the Choice on the planner's route
    states = state_machines.definition("deploy_pipeline")["States"]
    choice = states["ChooseRemediation"]
    routes = {c["StringEquals"]: c["Next"] for c in choice["Choices"]}
    # Then each route goes where its action repeats the pipeline, and anything else tears down
    assert states[routes["redeploy"]]["Next"] == "DeployEndpoint"
    assert states[routes["repack"]]["Next"] == "PackArtifact"
    assert routes["warm"] == "WarmUpShapes"
    assert states[routes["retry"]] == {
        "Type": "Wait",
        "SecondsPath": "$.remediation.wait_s",
        "Next": "WarmUpShapes",
    }
    assert choice["Default"] == "TeardownAfterFailure"
    # And the routes are exactly the planner's
    from workflows.contracts import RemediationPlan

    assert set(routes) | {"fail"} == set(RemediationPlan.model_fields["route"].annotation.__args__)
