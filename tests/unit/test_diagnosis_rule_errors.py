"""Error names in the diagnosis rules are the errors module's (or a runtime's): checked at load time."""

from __future__ import annotations

from typing import Any

import pytest

from state_machines import error_names
from tests.support.diagnosis import rule
from workflows.diagnosis.rules import default_rules, parse_rules


def test_every_error_the_packaged_rules_name_is_a_class_of_the_errors_module_or_a_runtime_error() -> None:
    # Given every error name the packaged rules match on, in any part of a rule
    named = {
        (rule.id, condition.error)
        for rule in default_rules().rules
        for condition in (*rule.signatures, *rule.requires, *rule.unless, *rule.prefers)
        if condition.error is not None
    }
    # Then each is a class of workflows/errors.py or one the Step Functions / Lambda runtimes raise
    known = error_names.error_names() | error_names.RUNTIME_ERROR_NAMES
    assert sorted(pair for pair in named if pair[1] not in known) == []
    # And the table does match on the project's own errors, not only on runtime ones
    assert {"CapacityStall", "PreflightBlocked", "QuantizationCollapsed"} <= {error for _, error in named}


@pytest.mark.parametrize("part", ["signatures", "requires", "unless", "prefers"])
def test_a_rule_naming_an_unknown_error_is_refused_with_the_rule_and_the_name(part: str) -> None:
    # Given a rule whose condition names an error class that does not exist (a typo of CapacityStall)
    condition: dict[str, Any] = {"error": "CapacityStal"}
    if part == "signatures":
        condition["confidence"] = 0.9
    data = {"checked": "2026-12-01", "rules": [rule(**{part: [condition]})]}
    # When the table is loaded
    with pytest.raises(ValueError) as raised:
        parse_rules(data, "test.yaml")
    # Then the error names the table, the rule, where in it, the unknown name and the fix
    message = str(raised.value)
    assert "test.yaml" in message
    assert "rule F99 (test-entry)" in message
    assert f"{part}[0] names error 'CapacityStal'" in message
    assert "workflows/errors.py" in message


def test_a_misspelt_runtime_error_is_refused_and_the_real_one_accepted() -> None:
    # Given a rule on States.Timout (misspelt) and one on States.Timeout
    bad = {
        "checked": "2026-12-01",
        "rules": [rule(signatures=[{"error": "States.Timout", "confidence": 0.5}])],
    }
    good = {
        "checked": "2026-12-01",
        "rules": [rule(signatures=[{"error": "States.Timeout", "confidence": 0.5}])],
    }
    # When both are loaded
    with pytest.raises(ValueError, match="'States.Timout'"):
        parse_rules(bad, "bad.yaml")
    rules = parse_rules(good, "good.yaml")
    # Then only the real name loads
    assert rules.rules[0].signatures[0].error == "States.Timeout"


def test_the_runtime_names_are_not_classes_of_the_errors_module() -> None:
    # Given the runtimes' own names and the project's classes
    # Then no name is both (a class named like a runtime error would shadow it in ErrorEquals)
    assert error_names.RUNTIME_ERROR_NAMES.isdisjoint(error_names.error_names())
    assert all(
        name.startswith(("States.", "Lambda.", "Sandbox.")) for name in error_names.RUNTIME_ERROR_NAMES
    )
    assert error_names.is_error_name("CapacityStall") and not error_names.is_error_name("CapacityStal")
