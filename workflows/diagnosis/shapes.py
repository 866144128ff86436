"""The shape a pasted record's field must have to be read: a console, an OCR or a person may write text where the
service's record holds an object ("RuntimeConfig: CopyCount 1")."""

from __future__ import annotations

from typing import Any


def fields(value: Any) -> dict[str, Any]:
    """An object field of a pasted record; anything else written in its place holds no fields."""
    return value if isinstance(value, dict) else {}


def text_field(value: Any) -> str | None:
    """A string field of a pasted record; an object or a list written in its place is no text of that field."""
    return value if isinstance(value, str) else None


def objects(value: Any) -> list[dict[str, Any]]:
    """The objects of a list field; anything else written there (text, a number) is no object."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
