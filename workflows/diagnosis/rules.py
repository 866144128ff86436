"""The rule model: each failure catalogue entry's runtime signatures, as data.

``workflows/data/diagnosis_rules.yaml`` holds the rules; this module validates them when they
are loaded (every regex compiles, every action is in the vocabulary, every fact exists, every
error name is a class of ``workflows/errors.py`` or a runtime's own), so a typo in the table fails
the test suite, not a diagnosis at 3 a.m.

A rule matches when at least one of its ``signatures`` holds, every ``requires`` condition
holds (an unknown fact keeps the match below the reporting threshold instead: a required fact is
the context an entry is specific to, and an entry is not named without evidence of it), and no
``unless`` condition holds; a ``doubts`` condition that holds keeps it under the threshold. A
condition is a conjunction of any of: ``pattern`` (a regex fragment searched in the evidence
texts of the rule's sources), ``error`` (a Step Functions error name), ``fact`` with ``is``
(see ``facts.FACTS``). Each ``prefers`` condition that holds adds weight: context (co-hosted
containers, an LMI image, inference components) that ranks this entry above another that shares
its signature.
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from state_machines.error_names import RUNTIME_ERROR_NAMES, is_error_name
from workflows.diagnosis.actions import Action
from workflows.diagnosis.evidence import SOURCES, Source
from workflows.diagnosis.facts import FACTS

RULES_FILE = "diagnosis_rules.yaml"
_ID = re.compile(r"^(F\d{2}|\{[a-z_]+\})$")


class Condition(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    pattern: str | None = Field(None, description="Regex fragment, case-insensitive, on normalised text.")
    error: str | None = Field(None, description="A Step Functions error name (exact).")
    fact: str | None = Field(None, description="A fact name from facts.FACTS.")
    is_: bool | str = Field(True, alias="is", description="The value the fact must have.")
    sources: tuple[Source, ...] | None = Field(None, description="Override the rule's sources.")
    confidence: float | None = Field(None, ge=0.0, le=1.0, description="Signatures only.")

    @model_validator(mode="after")
    def _something(self) -> Condition:
        if self.pattern is None and self.error is None and self.fact is None:
            raise ValueError("a condition needs a pattern, an error or a fact")
        if self.fact is not None and self.fact not in FACTS:
            raise ValueError(f"unknown fact {self.fact!r}; known: {sorted(FACTS)}")
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except re.error as error:
                raise ValueError(f"pattern {self.pattern!r} does not compile: {error}") from None
        return self

    @property
    def regex(self) -> re.Pattern[str] | None:
        return _compiled(self.pattern) if self.pattern is not None else None


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="Catalogue ID (F06), or {group} filled from a named capture.")
    name: str = Field(description="The catalogue entry's short name, e.g. capacity-stall.")
    title: str
    action: Action
    fix: str
    sources: tuple[Source, ...] = Field(SOURCES, description="Evidence sources its patterns read.")
    signatures: tuple[Condition, ...] = Field(min_length=1)
    requires: tuple[Condition, ...] = ()
    unless: tuple[Condition, ...] = ()
    prefers: tuple[Condition, ...] = Field(
        (), description="Context that makes this entry likelier than another with the same signature."
    )
    doubts: tuple[Condition, ...] = Field(
        (),
        description="Evidence against this entry's explanation that does not rule out its signature (the "
        "requirements list the module an import error names): where one holds, the match is held below the "
        "reporting threshold, so the answer is unknown with this entry and its causes as candidates.",
    )
    causes: tuple[str, ...] = Field(
        (),
        description="Entries this failure brings about (CUDA 803 makes the ping fail): where both match, "
        "this one is the answer and they are listed as its consequences.",
    )
    recurs: bool = Field(
        False,
        description="A failure that ends by itself each time it happens (a slow scale-in does reach zero): an "
        "alert that resolved does not settle it.",
    )

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(f"id {value!r} must be F<two digits> or a {{capture}} template")
        return value

    @field_validator("signatures")
    @classmethod
    def _confident(cls, value: tuple[Condition, ...]) -> tuple[Condition, ...]:
        if any(s.confidence is None for s in value):
            raise ValueError("every signature needs a confidence")
        return value

    @model_validator(mode="after")
    def _known_errors(self) -> Rule:
        # A misspelt error name never matches: the rule would be silently dead, so refuse it here.
        for part in ("signatures", "requires", "unless", "prefers", "doubts"):
            for index, condition in enumerate(getattr(self, part)):
                if condition.error is not None and not is_error_name(condition.error):
                    raise ValueError(
                        f"rule {self.id} ({self.name}): {part}[{index}] names error {condition.error!r}, "
                        "which is neither a class of workflows/errors.py nor a runtime error "
                        f"({', '.join(sorted(RUNTIME_ERROR_NAMES))}); fix the name, or add the class "
                        "to workflows/errors.py"
                    )
        return self


class RuleSet(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    checked: date = Field(description="When the rules were last compared with the catalogue.")
    rules: tuple[Rule, ...]

    def ids(self) -> set[str]:
        return {rule.id for rule in self.rules if not rule.id.startswith("{")}

    @model_validator(mode="after")
    def _known_consequences(self) -> RuleSet:
        unknown = sorted({c for rule in self.rules for c in rule.causes} - self.ids())
        if unknown:
            raise ValueError(f"causes names entries no rule has: {unknown}")
        return self


def parse_rules(data: Any, origin: str) -> RuleSet:
    """Validate a rule table.

    Raises:
        ValueError: naming the rule and the field that is wrong.
    """
    try:
        return RuleSet.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in item['loc'])}: {item['msg']}" for item in error.errors()
        )
        raise ValueError(f"diagnosis rules {origin} are invalid: {problems}") from None


def load_rules(path: Path | None = None) -> RuleSet:
    """The rule table at ``path``, or the packaged one."""
    if path is None:
        return default_rules()
    return parse_rules(yaml.safe_load(path.read_text(encoding="utf-8")), str(path))


@lru_cache(maxsize=1)
def default_rules() -> RuleSet:
    text = (files("workflows") / "data" / RULES_FILE).read_text(encoding="utf-8")
    return parse_rules(yaml.safe_load(text), RULES_FILE)
