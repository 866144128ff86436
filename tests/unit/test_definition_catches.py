"""Catch and Retry of every definition: one catch-all per target, named errors only where they change the path."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import state_machines
from state_machines.error_names import retryable_names
from workflows.errors import ResourceBusy


def _states(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every state, those of Map item processors included."""
    for name, state in document["States"].items():
        yield name, state
        processor = state.get("ItemProcessor") or state.get("Iterator")
        if processor:
            yield from _states(processor)


@pytest.mark.parametrize("name", state_machines.names())
def test_no_catcher_repeats_the_target_and_path_of_another(name: str) -> None:
    # Given every Catch of the definition
    for state_name, state in _states(state_machines.definition(name)):
        routes = [(c["Next"], c.get("ResultPath", "$")) for c in state.get("Catch", [])]
        # Then each (target, result path) is caught once: a named list beside States.ALL is dead weight
        assert len(routes) == len(set(routes)), f"{name}.{state_name}: {state['Catch']}"


@pytest.mark.parametrize("name", state_machines.names())
def test_catch_is_the_catch_all_alone(name: str) -> None:
    for state_name, state in _states(state_machines.definition(name)):
        for catcher in state.get("Catch", []):
            assert catcher["ErrorEquals"] == ["States.ALL"], f"{name}.{state_name}: {catcher}"


def test_task_retries_still_name_every_retryable_error() -> None:
    # Given the deploy pipeline's Lambda tasks
    tasks = {
        n: s for n, s in state_machines.definition("deploy_pipeline")["States"].items() if s["Type"] == "Task"
    }
    assert tasks
    expected = set(retryable_names()) - {ResourceBusy.__name__}
    for state_name, state in tasks.items():
        named = {error for retrier in state["Retry"] for error in retrier["ErrorEquals"]}
        # Then each retries the retryable errors by name (only a Catch lost its named list)
        assert expected <= named, f"{state_name} misses {sorted(expected - named)}"
        assert not named & {"States.ALL"}, f"{state_name} retries everything"


def test_removing_the_named_catch_halved_the_error_names() -> None:
    # Given the deploy pipeline's ErrorEquals entries, Retry and Catch together
    document = state_machines.definition("deploy_pipeline")
    in_catch = sum(len(c["ErrorEquals"]) for _, s in _states(document) for c in s.get("Catch", []))
    in_retry = sum(len(r["ErrorEquals"]) for _, s in _states(document) for r in s.get("Retry", []))
    catchers = sum(len(s.get("Catch", [])) for _, s in _states(document))
    # Then a Catch contributes one name per catcher, Retry the rest
    assert in_catch == catchers
    assert in_retry > in_catch
