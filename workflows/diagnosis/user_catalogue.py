"""User catalogues: failure entries and rules added without touching the installed package.

A user catalogue is a YAML file with any of ``sections`` (key: heading), ``entries`` (each with
the fields of ``workflows/data/catalogue.yaml``) and ``rules`` (each with the fields of
``workflows/data/diagnosis_rules.yaml``), validated by the same models as the packaged ones.
``deploybench diagnose`` reads every ``*.yaml`` of the user directory
(``$XDG_CONFIG_HOME/deploybench/catalogue.d``, by default ``~/.config/deploybench/catalogue.d``)
and each ``--catalogue FILE``; their rules join the packaged ones.

An entry takes an ID the package does not use (F90..F99 stay free of packaged entries); a rule
names a packaged entry (a new signature for F06) or an entry of a user file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from workflows.diagnosis.catalogue import Entry, load_catalogue
from workflows.diagnosis.rules import Rule, RuleSet, default_rules
from workflows.errors import CatalogueInvalid

USER_SUBDIRECTORY = Path("deploybench") / "catalogue.d"
EXAMPLE_FIX = (
    "write `entries:` (id F90..F99, name, section, title, phase, signature, cause, prevent, remedy) and "
    "`rules:` (id, name, title, action, fix, signatures with pattern and confidence) as in "
    "workflows/data/catalogue.yaml and workflows/data/diagnosis_rules.yaml"
)


class UserCatalogue(BaseModel):
    """One user file: entries and the rules that name them (or name packaged entries)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sections: dict[str, str] = Field(default_factory=dict)
    entries: tuple[Entry, ...] = ()
    rules: tuple[Rule, ...] = ()


def user_directory(environ: Mapping[str, str] | None = None) -> Path:
    """Where user catalogues live: ``$XDG_CONFIG_HOME/deploybench/catalogue.d`` (``~/.config`` by default)."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CONFIG_HOME") or ""
    root = (
        Path(base)
        if base and Path(base).is_absolute()
        else Path(environ.get("HOME") or Path.home()) / ".config"
    )
    return root / USER_SUBDIRECTORY


def user_files(directory: Path) -> list[Path]:
    """The directory's catalogue files, in name order (none when it does not exist)."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def read_user_catalogue(path: Path) -> UserCatalogue:
    """One user file, validated.

    Raises:
        CatalogueInvalid: the file is missing, not YAML, or a field is wrong (named with its path).
    """
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CatalogueInvalid(
            f"catalogue file {path} does not exist", fix="give an existing YAML file"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise CatalogueInvalid(
            f"catalogue file {path} cannot be read: {error}", fix="give a readable YAML file"
        ) from None
    except yaml.YAMLError as error:
        raise CatalogueInvalid(f"catalogue file {path} is not YAML: {error}", fix=EXAMPLE_FIX) from None
    if not isinstance(data, dict) or not ({"entries", "rules"} & set(data)):
        raise CatalogueInvalid(
            f"catalogue file {path} holds no `entries:` or `rules:` mapping", fix=EXAMPLE_FIX
        )
    try:
        return UserCatalogue.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in item['loc'])}: {item['msg']}" for item in error.errors()
        )
        raise CatalogueInvalid(f"catalogue file {path} is invalid: {problems}", fix=EXAMPLE_FIX) from None


def combined_rules(paths: list[Path]) -> tuple[RuleSet, list[Entry]]:
    """The packaged rules with those of ``paths``, and the user entries, checked against each other.

    Raises:
        CatalogueInvalid: an entry reuses an ID, names an unknown section, or a rule names no entry.
    """
    packaged = load_catalogue()
    known_ids = {e.id for e in packaged.entries}
    rules = list(default_rules().rules)
    entries: list[Entry] = []
    origin: dict[str, Path] = {}
    files = [(path, read_user_catalogue(path)) for path in paths]
    for path, user in files:
        sections = set(packaged.sections) | set(user.sections)
        for entry in user.entries:
            if entry.id in known_ids:
                where = "the packaged catalogue" if entry.id not in origin else str(origin[entry.id])
                raise CatalogueInvalid(
                    f"catalogue file {path}: entry {entry.id} is already defined by {where}",
                    fix="give the entry an unused ID (F90..F99), or add rules under the existing ID without an entry",
                )
            if entry.section not in sections:
                raise CatalogueInvalid(
                    f"catalogue file {path}: entry {entry.id} names section {entry.section!r}, which is not known",
                    fix=f"use one of {sorted(sections)}, or declare it under `sections:` in the file",
                )
            known_ids.add(entry.id)
            origin[entry.id] = path
            entries.append(entry)
    for path, user in files:
        for rule in user.rules:
            if not rule.id.startswith("{") and rule.id not in known_ids:
                raise CatalogueInvalid(
                    f"catalogue file {path}: rule {rule.name!r} names {rule.id}, which no entry defines",
                    fix="add the entry under `entries:` (in this file or another user file), or name a packaged entry",
                )
        rules.extend(user.rules)
    return RuleSet(checked=default_rules().checked, rules=tuple(rules)), entries


def rules_for_cli(
    extra: list[Path] | None, environ: Mapping[str, str] | None = None
) -> tuple[RuleSet, list[Path]]:
    """What ``deploybench diagnose`` matches with: the packaged rules, the user directory's, ``extra``'s.

    Returns:
        The rule set and the user files it read, in order.
    """
    paths = [*user_files(user_directory(environ)), *(extra or [])]
    if not paths:
        return default_rules(), []
    rules, _ = combined_rules(paths)
    return rules, paths
