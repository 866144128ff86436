"""The failure catalogue, as the project ships it: entries joined with the rules that act on them.

``workflows/data/catalogue.yaml`` holds each entry's words (title, signature, cause, what a static
check compares, remedy). The rest comes from where it is enforced, so the documentation cannot
drift from the code: the runtime rules that name an entry (``diagnosis_rules.yaml``), the preflight
checks that prevent it (registered per hosting mode) and its remediation branch (its rules'
action). ``render_markdown`` writes ``docs/failures.md``; ``render_entry`` is one entry for the
terminal (``deploybench catalogue F06``).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from importlib.resources import files

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from workflows.diagnosis.actions import MEANING, Action
from workflows.diagnosis.rules import Rule, default_rules

CATALOGUE_FILE = "catalogue.yaml"
_ID = re.compile(r"^F\d{2}$")


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=_ID.pattern)
    name: str
    section: str
    title: str
    phase: str
    signature: str
    cause: str
    prevent: str | None = Field(description="What a static check compares; null when none can tell.")
    remedy: str
    handled_by: str | None = Field(
        None, description="module:attribute of the code that handles an entry no error message reveals."
    )


class Catalogue(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    checked: date
    sections: dict[str, str]
    entries: tuple[Entry, ...]

    @model_validator(mode="after")
    def _consistent(self) -> Catalogue:
        ids = [e.id for e in self.entries]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate catalogue ids {duplicates}")
        unknown = sorted({e.section for e in self.entries} - set(self.sections))
        if unknown:
            raise ValueError(f"unknown sections {unknown}; known: {sorted(self.sections)}")
        return self

    def entry(self, entry_id: str) -> Entry | None:
        return next((e for e in self.entries if e.id == entry_id.upper()), None)


@dataclass(frozen=True)
class StaticCheck:
    """A registered preflight check and the hosting modes it runs for."""

    name: str
    modes: tuple[str, ...]


@dataclass(frozen=True)
class Linked:
    """One entry with what enforces it."""

    entry: Entry
    rules: tuple[Rule, ...]
    checks: tuple[StaticCheck, ...]

    @property
    def actions(self) -> tuple[Action, ...]:
        """The remediation branches its rules take (``fail`` left out)."""
        found = dict.fromkeys(r.action for r in self.rules if r.action is not Action.FAIL)
        return tuple(found)


@lru_cache(maxsize=1)
def load_catalogue() -> Catalogue:
    """The packaged catalogue."""
    text = (files("workflows") / "data" / CATALOGUE_FILE).read_text(encoding="utf-8")
    return Catalogue.model_validate(yaml.safe_load(text))


def static_checks() -> dict[str, list[StaticCheck]]:
    """Every preflight check the hosting modes declare, by the catalogue IDs it covers."""
    from workflows.hosting.modes import strategies
    from workflows.preflight.registry import ACCOUNT_CHECKS

    modes_of: dict[str, list[str]] = {name: ["every mode"] for name in ACCOUNT_CHECKS}
    ids_of: dict[str, tuple[str, ...]] = dict(ACCOUNT_CHECKS)
    for mode, strategy in strategies().items():
        for check in strategy.checks:
            modes_of.setdefault(check.name, []).append(mode)
            ids_of[check.name] = check.ids
    by_id: dict[str, list[StaticCheck]] = {}
    for name, modes in modes_of.items():
        for entry_id in ids_of[name]:
            by_id.setdefault(entry_id, []).append(StaticCheck(name, tuple(modes)))
    return by_id


def resolve(reference: str) -> object:
    """The attribute a ``handled_by`` names (``module:attribute``).

    Raises:
        ValueError: the module or the attribute does not exist.
    """
    module_name, _, attribute = reference.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"handled_by {reference!r} does not resolve: {error}") from None


def linked() -> list[Linked]:
    """Every entry, in catalogue order, with its rules and its static checks."""
    rules = default_rules().rules
    checks = static_checks()
    return [
        Linked(
            entry=e,
            rules=tuple(r for r in rules if r.id == e.id),
            checks=tuple(checks.get(e.id, [])),
        )
        for e in load_catalogue().entries
    ]


def _rule_text(item: Linked) -> str:
    if item.rules:
        return "; ".join(dict.fromkeys(f"`{r.name}`: {r.title}" for r in item.rules))
    if item.entry.handled_by:
        return f"no error message reveals it; handled by `{item.entry.handled_by}`"
    return "none"


def _prevent_text(item: Linked) -> str:
    if item.entry.prevent is None:
        return "none: nothing before deploy can tell"
    if not item.checks:
        return f"{item.entry.prevent} (no preflight check registered yet)"
    registered = "; ".join(f"{c.name} ({', '.join(c.modes)})" for c in item.checks)
    return f"{item.entry.prevent}. Preflight: {registered}"


def _remedy_text(item: Linked) -> str:
    if not item.actions:
        return f"→ {item.entry.remedy}"
    branches = ", ".join(f"`{a.value}`" for a in item.actions)
    return f"⇒ {branches}: {item.entry.remedy}"


def fields(item: Linked) -> list[tuple[str, str]]:
    """An entry's fields as (label, text), in the order both renderings use."""
    entry = item.entry
    return [
        ("Phase", entry.phase),
        ("Signature", entry.signature),
        ("Cause", entry.cause),
        ("Static check", _prevent_text(item)),
        ("Runtime rule", _rule_text(item)),
        ("Remedy", _remedy_text(item)),
    ]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render_markdown() -> str:
    """docs/failures.md: every entry by section, with its checks, rules and remediation."""
    catalogue = load_catalogue()
    items = linked()
    lines = [
        "# Failure catalogue",
        "",
        "<!-- Generated from workflows/data/catalogue.yaml, workflows/data/diagnosis_rules.yaml and the",
        "     registered preflight checks: `deploybench catalogue --write docs/failures.md`. Do not edit. -->",
        "",
        "Every known way that deploying and benchmarking an encoder on SageMaker goes wrong. Each entry",
        "is prevented before any AWS resource exists where a static check can tell (`deploybench",
        "preflight`), named from its evidence when it happens (`deploybench diagnose`, the",
        "`DiagnoseFailure` state) and, where a fix is automatic (⇒), remediated by a branch of the",
        "state machine; → is advice. Quoted texts are the stable part of real messages.",
        "",
        f"Checked {catalogue.checked.isoformat()}; {len(items)} entries. "
        "One entry in the terminal: `deploybench catalogue F06`.",
        "",
    ]
    for key, heading in catalogue.sections.items():
        section = [i for i in items if i.entry.section == key]
        if not section:
            continue
        lines += [
            f"## {heading}",
            "",
            "| ID | " + " | ".join(label for label, _ in fields(section[0])) + " |",
        ]
        lines.append("|---" * (len(fields(section[0])) + 1) + "|")
        for item in section:
            cells = [f"{item.entry.id} {item.entry.name}: {item.entry.title}"]
            cells += [text for _, text in fields(item)]
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        lines.append("")
    lines += ["## Remediation branches", ""]
    lines += [f"- `{action.value}`: {_cell(MEANING[action])}" for action in Action]
    return "\n".join(lines) + "\n"


def render_entry(item: Linked) -> list[tuple[str, str]]:
    """One entry for the terminal: its heading, then its fields and each rule's fix."""
    rows = [(f"{item.entry.id} {item.entry.name}", item.entry.title), *fields(item)]
    for rule in item.rules:
        rows.append((f"Fix ({rule.name})", " ".join(rule.fix.split())))
    return rows
