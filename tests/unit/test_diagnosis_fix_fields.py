"""Diagnosis fixes name the run spec's fields (`hosting.workers: 1`), not only container
variables, and every field a fix names exists in the spec's schema."""

from __future__ import annotations

import re
from importlib.resources import files
from typing import Any

import pytest
import yaml

from workflows.diagnosis.actions import MEANING, Action
from workflows.spec.pipeline import RunSpec

SECTIONS = ("model", "convert", "pack", "hosting", "preflight", "wait", "benchmark", "remediation")
# A spec field in a fix: `hosting.workers` or `hosting.workers: 1`, in backticks.
FIELD = re.compile(r"`((?:" + "|".join(SECTIONS) + r")\.[a-z_]+)(?::[^`]*)?`")
# The spec field each remediation changes: a fix for it must say which field to set.
ACTION_FIELD = {
    Action.SINGLE_WORKER: "hosting.workers",
    Action.NEXT_MEMORY_SIZE: "hosting.memory_size_mb",
    Action.NEWER_AMI: "hosting.inference_ami_version",
    Action.LOWER_IC_MEMORY: "hosting.min_memory_mb",
    Action.NEXT_INSTANCE_TYPE: "hosting.instance_type_fallbacks",
    Action.LARGER_INSTANCE: "hosting.instance_type_fallbacks",
    Action.WARM_SHAPES: "benchmark.warmup_max_s",
}


def spec_fields() -> set[str]:
    """Every dotted field path of the run spec's JSON Schema (each hosting mode's fields included)."""
    schema = RunSpec.model_json_schema()
    definitions = schema.get("$defs", {})
    found: set[str] = set()

    def walk(node: dict[str, Any], prefix: str) -> None:
        if "$ref" in node:
            node = definitions[node["$ref"].rsplit("/", 1)[-1]]
        for key in ("anyOf", "oneOf", "allOf"):
            for member in node.get(key, []):
                walk(member, prefix)
        for name, child in (node.get("properties") or {}).items():
            path = f"{prefix}.{name}" if prefix else name
            found.add(path)
            walk(child, path)

    walk(schema, "")
    return found


def rules() -> list[dict[str, Any]]:
    text = (files("workflows") / "data" / "diagnosis_rules.yaml").read_text(encoding="utf-8")
    return list(yaml.safe_load(text)["rules"])


FIXES = [(f"{r['id']} fix", str(r["fix"])) for r in rules()] + [
    (f"action {a.value}", text) for a, text in MEANING.items()
]


def test_the_schema_walk_sees_every_hosting_modes_fields() -> None:
    fields = spec_fields()
    assert {
        "hosting.workers",
        "hosting.memory_size_mb",
        "hosting.min_memory_mb",
        "hosting.max_model_len",
    } <= fields
    assert "hosting.no_such_field" not in fields


@pytest.mark.parametrize(("where", "fix"), FIXES, ids=[w for w, _ in FIXES])
def test_every_spec_field_a_fix_names_exists(where: str, fix: str) -> None:
    unknown = sorted(set(FIELD.findall(fix)) - spec_fields())
    assert not unknown, f"{where} names {unknown}, which the run spec does not have"


def test_every_fix_whose_remedy_is_a_spec_field_names_it() -> None:
    missing = [
        f"{r['id']} ({r['action']}): {ACTION_FIELD[Action(r['action'])]}"
        for r in rules()
        if r.get("action") in {a.value for a in ACTION_FIELD}
        and ACTION_FIELD[Action(r["action"])] not in FIELD.findall(str(r["fix"]))
    ]
    assert not missing, "fixes that do not name the spec field to set: " + "; ".join(missing)
    for action, field in ACTION_FIELD.items():
        assert field in FIELD.findall(MEANING[action]), action


def test_the_worker_fix_names_the_spec_field_and_its_value_beside_the_container_variable() -> None:
    [f02] = [r for r in rules() if r["id"] == "F02"]
    assert "`hosting.workers: 1`" in f02["fix"] and "SAGEMAKER_MODEL_SERVER_WORKERS=1" in f02["fix"]
