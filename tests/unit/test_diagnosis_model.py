"""The rule model and the action vocabulary: the table is validated data, the actions are bounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.diagnosis import rule
from workflows.diagnosis import diagnose, evidence_from_text, load_rules
from workflows.diagnosis.actions import MEANING, Action, remediable
from workflows.diagnosis.evidence import normalize
from workflows.diagnosis.rules import default_rules, parse_rules
from workflows.spec.pipeline import RemediationSpec, parse_spec


@pytest.mark.parametrize(
    ("overrides", "complaint"),
    [
        ({"signatures": [{"pattern": "(unclosed", "confidence": 0.9}]}, "does not compile"),
        ({"action": "reboot_everything"}, "action"),
        ({"signatures": [{"fact": "is_tuesday", "confidence": 0.9}]}, "unknown fact"),
        ({"id": "F1"}, "must be F<two digits>"),
        ({"signatures": [{"pattern": "boom"}]}, "needs a confidence"),
        ({"signatures": [{"confidence": 0.9}]}, "needs a pattern, an error or a fact"),
    ],
)
def test_a_malformed_rule_is_refused_when_loaded(overrides: dict[str, Any], complaint: str) -> None:
    # Given a rule table with one mistake
    data = {"checked": "2026-11-29", "rules": [rule(**overrides)]}
    # When it is loaded
    with pytest.raises(ValueError) as raised:
        parse_rules(data, "test.yaml")
    # Then the error names the problem
    assert complaint in str(raised.value)


def test_a_new_rule_in_a_table_file_diagnoses_without_code_changes(tmp_path: Path) -> None:
    # Given a rule table file with one new entry
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"checked": "2026-11-29", "rules": [rule()]}), encoding="utf-8")
    rules = load_rules(path)
    # When a text with its signature is diagnosed against that table
    diagnosis = diagnose(evidence_from_text("INFO starting\nERROR  BOOM happened", origin="x"), rules)
    # Then the new entry is named
    assert (diagnosis.id, diagnosis.confidence) == ("F99", 0.9)


def test_every_rule_action_and_every_action_meaning_is_in_the_vocabulary() -> None:
    # Given the packaged rules and the vocabulary
    actions = {r.action for r in default_rules().rules}
    # Then rules use only vocabulary actions, and every action is documented
    assert actions <= set(Action)
    assert set(MEANING) == set(Action)
    # And every remediable action is used by some rule
    assert set(remediable()) <= actions


def test_every_remediable_action_has_an_attempt_bound_in_the_spec() -> None:
    # Given the default spec
    spec = parse_spec({"name": "x"})
    # Then each action has a positive bound; fail has none; disabling removes them all
    assert all(spec.remediation.attempts_for(a.value) >= 1 for a in remediable())
    assert spec.remediation.attempts_for(Action.FAIL.value) == 0
    assert spec.remediation.attempts_for("enabled") == 0
    off = RemediationSpec(enabled=False)
    assert all(off.attempts_for(a.value) == 0 for a in remediable())


def test_remediation_bounds_are_validated_in_the_spec() -> None:
    from workflows.errors import SpecInvalid

    # Given more serverless memory steps than there are sizes
    # Then the spec is refused naming the field
    with pytest.raises(SpecInvalid) as raised:
        parse_spec({"name": "x", "remediation": {"next_memory_size": 9}})
    assert "remediation.next_memory_size" in str(raised.value)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Worker\n      died", "Worker died"),
        (
            'message \\"No module named \\u0027onnxruntime\\u0027\\"',
            "message \"No module named 'onnxruntime'\"",
        ),
        (
            "\x1b[31mERROR\x1b[0m  Invalid input name:\ttoken_type_ids",
            "ERROR Invalid input name: token_type_ids",
        ),
    ],
)
def test_normalisation_undoes_wrapping_escapes_and_colours(raw: str, expected: str) -> None:
    # When a text is normalised
    # Then it is the single-spaced, unescaped form the signatures are written against
    assert normalize(raw) == expected
