"""A pydantic error, as lines a person can act on: the field, the value, what is accepted, the fix."""

from __future__ import annotations

import difflib
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


def explain(error: ValidationError, model: type[BaseModel]) -> str:
    """Turn a pydantic error into lines naming each field, the problem and the fix.

    Args:
        error: what pydantic raised.
        model: the model that was validated (the run spec, a sweep spec, benchmark settings...).
    """
    lines = []
    for item in error.errors():
        loc = tuple(item["loc"])
        where = ".".join(str(p) for p in loc) or "(top level)"
        problem = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            problem = "unknown field"
            fix = _unknown_field_fix(model, loc)
        elif item["type"] == "missing":
            fix = _walk(model, loc)[1] or "add it"
        else:
            fix = _walk(model, loc)[1] or "see `deploybench schema`"
        got = "" if item["type"] == "missing" else f" (got {item.get('input')!r})"
        lines.append(f"{where}: {problem}{got}. Fix: {fix}")
    return "\n".join(lines)
