"""The one table of steps (state_machines.FUNCTIONS): every name a step has follows from its state's."""

from __future__ import annotations

import ast
import importlib
import inspect
import typing
from pathlib import Path
from typing import Any

import pytest

import state_machines
from state_machines.steps_index import PAGE, render_index, stale_sections
from tests.support.step_table import handler_tests

ROOT = Path(__file__).resolve().parents[2]
STEPS_DIR = ROOT / "workflows" / "steps"

# Handlers no test module imports or invokes: none (tests/test_handlers_*.py call each one on moto).
# A new handler without a test must be listed here, and fails below until it is one or the other.
EXPECTED_GAPS: tuple[str, ...] = ()


def resolve(reference: str) -> Any:
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def definition_states() -> dict[str, str]:
    """Every Task state of every definition that runs a function, with its placeholder."""
    found: dict[str, str] = {}
    for name in state_machines.names():
        for state, body in state_machines.definition(name)["States"].items():
            resource = body.get("Resource", "")
            if body["Type"] == "Task" and resource.endswith("FunctionArn}"):
                found[state] = resource[2:-1]
    return found


@pytest.mark.parametrize("row", state_machines.FUNCTIONS, ids=lambda r: r.state)
def test_handler_file_and_placeholder_are_the_state_name(row: state_machines.LambdaFunction) -> None:
    # Given a row: its handler file exists under the state's snake-case name
    assert (ROOT / "lambdas" / f"{row.module}.py").is_file()
    assert row.placeholder == f"{row.state}FunctionArn"
    # And a step whose logic is in workflows/steps/ is named after its state there too
    module = row.logic.partition(":")[0]
    if module.startswith("workflows.steps."):
        assert module == f"workflows.steps.{row.module}"


@pytest.mark.parametrize("row", state_machines.FUNCTIONS, ids=lambda r: r.state)
def test_logic_takes_the_request_and_returns_the_result_of_the_row(
    row: state_machines.LambdaFunction,
) -> None:
    # Given the row's logic function and models
    logic, request, result = resolve(row.logic), resolve(row.request), resolve(row.result)
    hints = typing.get_type_hints(logic, localns=_TypeCheckingNames(logic.__globals__))
    # Then it returns the result model
    assert hints["return"] is result, f"{row.logic} returns {hints['return']}, the table says {row.result}"
    # And its first parameter is the request model (the janitor and CheckSpec take fields of it)
    first = next(iter(inspect.signature(logic).parameters.values()))
    if first.kind is not inspect.Parameter.KEYWORD_ONLY:
        assert hints[first.name] in {request, *request_fields(request)}
    # And the handler calls it
    handler_source = (ROOT / "lambdas" / f"{row.module}.py").read_text(encoding="utf-8")
    assert logic.__name__ in handler_source
    assert request.__name__ in handler_source or row.state == "CheckSpec"


class _TypeCheckingNames(dict[str, Any]):
    """The module's names, and Any for those imported only under TYPE_CHECKING (the typed clients)."""

    def __missing__(self, key: str) -> Any:
        return Any


def request_fields(request: Any) -> list[Any]:
    """The request's field types: CheckSpec's logic takes its spec, WriteReport's its state."""
    return list(typing.get_type_hints(request).values())


def test_every_function_state_of_every_definition_is_a_row() -> None:
    # Given the Task states of the definitions, and the states the table names
    states = definition_states()
    named = {row.state: row.placeholder for row in state_machines.FUNCTIONS}
    named |= {also: row.placeholder for row in state_machines.FUNCTIONS for also in row.also}
    # Then each runs the function its row names, and no row names a state no definition has
    # (but the trigger-started ones)
    assert {state: named.get(state) for state in states} == states
    triggered = {"StartRedeploy", "Janitor", "TeardownStoppedExecution"}
    assert set(named) - set(states) == triggered


def test_an_unknown_step_is_refused_by_name() -> None:
    with pytest.raises(KeyError, match="no step 'ConvertToOnx'"):
        state_machines.resource("ConvertToOnx")


def test_every_step_has_a_handler_test_or_is_a_listed_gap() -> None:
    # Given the handlers each test module imports or invokes
    covered = handler_tests()
    missing = {row.state for row in state_machines.FUNCTIONS if f"lambdas.{row.module}" not in covered}
    # Then the handlers without one are exactly the listed gaps
    assert missing == set(EXPECTED_GAPS), (
        f"without a handler test but not listed: {sorted(missing - set(EXPECTED_GAPS))}; "
        f"listed but tested now (remove them): {sorted(set(EXPECTED_GAPS) - missing)}"
    )


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            if node.module == "workflows.steps":
                found |= {f"workflows.steps.{alias.name}" for alias in node.names}
    return found


@pytest.mark.parametrize("path", sorted(STEPS_DIR.glob("*.py")), ids=lambda p: p.name)
def test_steps_do_not_import_other_steps(path: Path) -> None:
    # Given a step module's imports, those inside functions included
    steps = {m for m in imported_modules(path) if m.startswith("workflows.steps")}
    # Then none is another step: what steps share lives in its domain module
    assert steps == set(), f"{path.name} imports {sorted(steps)}"


def test_the_docs_steps_index_is_generated_and_up_to_date() -> None:
    # Given the committed page that holds the index
    page = PAGE.read_text(encoding="utf-8")
    # Then its Steps index is what the table renders (regenerate: python -m state_machines.steps_index --write)
    assert stale_sections(page) == [], (
        "the steps index of docs/concepts/index.md is stale: python -m state_machines.steps_index --write"
    )
    assert render_index() in page


def test_a_stale_index_is_found() -> None:
    page = PAGE.read_text(encoding="utf-8")
    stale = page.replace("`lambdas/warm_up_shapes.py`", "`lambdas/warmup.py`")
    assert stale_sections(stale) == ["steps"]
