"""A pydantic error, as lines a person can act on: the field, the value, what is accepted, the fix."""

from __future__ import annotations

import difflib
import re
from typing import Any

from pydantic import BaseModel, ValidationError


class _UnionOf:
    """Field lookup across the members of a discriminated union."""

    def __init__(self, members: list[type[BaseModel]]) -> None:
        self.model_fields: dict[str, Any] = {}
        self.by_tag: dict[str, type[BaseModel]] = {}
        for member in members:
            self.model_fields.update(member.model_fields)
            tag = member.model_fields.get("mode")
            if tag is not None and isinstance(tag.default, str):
                self.by_tag[tag.default] = member


def _walk(model: Any, loc: tuple[int | str, ...]) -> tuple[Any, str | None]:
    """The model that holds the innermost named field of ``loc``, and that field's description."""
    current: Any = model
    description = None
    for part in loc:
        if isinstance(part, int):
            continue
        if isinstance(current, _UnionOf) and part in current.by_tag:
            current = current.by_tag[part]  # hosting.serverless.memory_size_mb: that member's field
            continue
        fields = getattr(current, "model_fields", None)
        if fields is None or part not in fields:
            # A union member's tag (e.g. hosting.realtime.workers): stay on the same model.
            continue
        description = fields[part].description
        annotation = fields[part].annotation
        current = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
        if current is None:
            members = [
                a
                for a in getattr(annotation, "__args__", ())
                if isinstance(a, type) and issubclass(a, BaseModel)
            ]
            current = members[0] if len(members) == 1 else _UnionOf(members)
    return current, description


def _unknown_field_fix(model: Any, loc: tuple[int | str, ...]) -> str:
    """Remove it, or the field it most likely misspells."""
    holder, _ = _walk(model, loc[:-1])
    known = sorted(getattr(holder, "model_fields", {}) or {})
    given = str(loc[-1]) if loc else ""
    # A field the unknown one begins (instance_type -> instance_type_fallbacks) is what was meant
    # more often than the closest spelling (instance_count).
    near = [name for name in known if given and name.startswith(given)][:1]
    near = near or (difflib.get_close_matches(given, known, n=1, cutoff=0.6) if given else [])
    if near:
        return f"did you mean '{near[0]}'? Rename it, or remove it"
    listed = f" (fields here: {', '.join(known)})" if known else ""
    return f"remove it or check its spelling against `deploybench schema`{listed}"


EACH_LINE_FIX = (
    "change each field as its line says (`deploybench schema` lists every field and what it takes)"
)
"""The fix of a SpecInvalid whose message is ``explain``'s lines, each with its own fix."""

_QUOTED = re.compile(r"'([^']*)'")


def yaml_path(model: Any, loc: tuple[int | str, ...]) -> str:
    """``loc`` as the YAML reads: a union member's tag left out (``hosting.workers``, not
    ``hosting.realtime.workers``), list items as ``[0]``."""
    current: Any = model
    parts: list[str] = []
    for part in loc:
        if isinstance(part, int):
            parts.append(f"[{part}]")
            continue
        if isinstance(current, _UnionOf) and part in current.by_tag:
            current = current.by_tag[part]
            continue
        parts.append(("." if parts else "") + str(part))
        current, _ = _walk(current, (part,))
    return "".join(parts)


def did_you_mean(given: object, accepted: list[str]) -> str:
    """``did you mean 'realtime'? `` when one accepted value is close to ``given``, else ``""``."""
    near = difflib.get_close_matches(str(given), accepted, n=1, cutoff=0.5)
    return f"did you mean {near[0]!r}? " if near else ""


def _leaves(data: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if not isinstance(data, dict) or not data:
        return [(prefix, data)] if prefix else []
    found: list[tuple[str, Any]] = []
    for key, value in data.items():
        found += _leaves(value, f"{prefix}.{key}" if prefix else str(key))
    return found


def _involved(message: str, value: Any) -> str:
    """For a check across fields: only the fields the message names (``min_duration_s: 30, ...``),
    never the whole section or spec; empty when it names none."""
    if not isinstance(value, dict):
        return f" (got {value!r})"
    named = [
        (path, leaf)
        for path, leaf in _leaves(value)
        if re.search(rf"(?<![\w.]){re.escape(path)}(?![\w])", message)
        or re.search(rf"(?<![\w.]){re.escape(path.rsplit('.', 1)[-1])}(?![\w])", message)
    ]
    return f" (got {', '.join(f'{path}: {leaf!r}' for path, leaf in named)})" if named else ""


def explain(error: ValidationError, model: type[BaseModel]) -> str:
    """Turn a pydantic error into lines naming each field as the YAML has it, the value, what is
    accepted and the fix (a did-you-mean for every closed set: modes, tasks, precisions, ...).

    Args:
        error: what pydantic raised.
        model: the model that was validated (the run spec, a sweep spec, benchmark settings...).
    """
    lines = []
    for item in error.errors():
        loc = tuple(item["loc"])
        where = yaml_path(model, loc) or "(top level)"
        problem = item["msg"].removeprefix("Value error, ")
        given = item.get("input")
        got = f" (got {given!r})"
        context = item.get("ctx") or {}
        if item["type"] == "extra_forbidden":
            problem = "unknown field"
            fix = _unknown_field_fix(model, loc)
        elif item["type"] == "missing":
            fix = _walk(model, loc)[1] or "add it"
            got = ""
        elif item["type"] == "union_tag_invalid":
            # A misspelt hosting.mode: pydantic speaks of tags; the YAML has a field and its value.
            field = str(context.get("discriminator", "mode")).strip("'")
            tags = _QUOTED.findall(str(context.get("expected_tags", "")))
            where = f"{where}.{field}" if where != "(top level)" else field
            given = context.get("tag")
            problem = f"{given!r} is not one of {', '.join(tags)}"
            got = ""
            fix = f"{did_you_mean(given, tags)}set {where} to one of them".strip()
        elif item["type"] in ("literal_error", "enum"):
            accepted = _QUOTED.findall(str(context.get("expected", "")))
            problem = f"{given!r} is not one of {', '.join(accepted)}" if accepted else problem
            got = ""
            description = _walk(model, loc)[1]
            fix = did_you_mean(given, accepted) + (description or f"use one of {', '.join(accepted)}")
        else:
            fix = _walk(model, loc)[1] or "see `deploybench schema`"
            if isinstance(given, dict):
                # A check across fields: the message names them; the section or spec is not repeated.
                got = _involved(problem, given)
                named = re.match(r"^([a-z_]+(?:\.[a-z_]+)+): ", problem)
                if where == "(top level)" and named:
                    where, problem = named.group(1), problem[len(named.group(0)) :]
        lines.append(f"{where}: {problem}{got}. Fix: {fix}")
    return "\n".join(lines)
