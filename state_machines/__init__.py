"""State machine definitions (Amazon States Language), one per state machine.

Each definition is built here once and consumed unchanged by CDK (``definition_substitutions``)
and by the local engine: Lambda ARNs are ``${...FunctionArn}`` placeholders. ``FUNCTIONS`` is
the one table of which handler serves which placeholder, and of every Lambda function deployed
(CDK creates one per row; a row no definition uses is started by a trigger instead).

Low in the layers: the definitions import only ``workflows.errors``; the domain reads their table of
functions (timeouts for a run's lifetime, the report's step list), the CDK stack deploys them and the
local engine runs them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from state_machines.placeholders import AWS_START_EXECUTION_SYNC as AWS_START_EXECUTION_SYNC
from state_machines.placeholders import START_EXECUTION_SYNC as START_EXECUTION_SYNC
from state_machines.placeholders import state_machine_placeholder as state_machine_placeholder
from state_machines.steps import FUNCTIONS as FUNCTIONS
from state_machines.steps import STEPS as STEPS
from state_machines.steps import LambdaFunction as LambdaFunction
from state_machines.steps import resource as resource

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9]+)\}")


def _builders() -> dict[str, Callable[[], dict[str, Any]]]:
    from state_machines import benchmark_sweep, deploy_pipeline, redeploy_pipeline

    return {
        "deploy_pipeline": deploy_pipeline.definition,
        "benchmark_sweep": benchmark_sweep.definition,
        "redeploy_pipeline": redeploy_pipeline.definition,
    }


def all_placeholders() -> set[str]:
    """Every placeholder a definition may use: functions, state machines, the child-execution resource."""
    return (
        {f.placeholder for f in FUNCTIONS}
        | {state_machine_placeholder(n) for n in names()}
        | {START_EXECUTION_SYNC}
    )


def children(name: str) -> list[str]:
    """State machines that ``name`` starts (their ARN placeholders appear in its definition)."""
    used = placeholders(definition_json(name))
    return [other for other in names() if state_machine_placeholder(other) in used]


def creation_order() -> list[str]:
    """Every state machine after the ones it starts (their ARNs are substituted into it)."""
    ordered: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            raise ValueError(f"state machines start each other in a cycle: {' -> '.join((*path, name))}")
        if name not in ordered:
            for child in children(name):
                visit(child, (*path, name))
            ordered.append(name)

    for name in names():
        visit(name, ())
    return ordered


def names() -> list[str]:
    return sorted(_builders())


def definition(name: str) -> dict[str, Any]:
    """The ASL document of state machine ``name``, with placeholders."""
    return _builders()[name]()


def definition_json(name: str) -> str:
    return json.dumps(definition(name), indent=2)


def placeholders(text: str) -> set[str]:
    return set(_PLACEHOLDER.findall(text))


def render(name: str, substitutions: Mapping[str, str]) -> str:
    """The definition with every placeholder replaced; a missing one is an error, not a silent gap."""
    text = definition_json(name)
    missing = placeholders(text) - set(substitutions)
    if missing:
        raise KeyError(f"no substitution for {sorted(missing)} in {name}")
    return _PLACEHOLDER.sub(lambda m: substitutions[m.group(1)], text)
