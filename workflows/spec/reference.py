"""A JSON Schema rendered as the docs site's spec reference: one table per object, every field with
its type, default, bounds and description.

The schema is pydantic's (``RunSpec.model_json_schema()``, what ``deploybench schema`` prints), so the
page says exactly what the parser accepts. ``docs/hooks.py`` renders it when the site is built.
"""

from __future__ import annotations

import json
import re
from collections import deque
from typing import Any

Schema = dict[str, Any]

_CODE = re.compile(r"(`[^`]*`)")
_BOUNDS = (
    ("minimum", "≥ {}"),
    ("exclusiveMinimum", "> {}"),
    ("maximum", "≤ {}"),
    ("exclusiveMaximum", "< {}"),
    ("minLength", "at least {} character(s)"),
    ("maxLength", "at most {} characters"),
    ("minItems", "at least {} items"),
    ("maxItems", "at most {} items"),
    ("maxProperties", "at most {} entries"),
    ("pattern", "matches `{}`"),
)


def escape(text: str, *, cell: bool = True) -> str:
    """Markdown-safe prose: code spans kept, ``<``, ``>``, ``*`` and ``_`` escaped outside them,
    newlines folded and ``|`` escaped in a table cell."""
    parts = []
    for part in _CODE.split(text):
        if not part.startswith("`"):
            part = part.replace("<", "&lt;").replace(">", "&gt;").replace("*", r"\*").replace("_", r"\_")
        parts.append(part)
    out = "".join(parts)
    return " ".join(out.split()).replace("|", r"\|") if cell else out


def anchor(prefix: str, name: str) -> str:
    """The id of a definition's section: ``spec``, ``ModelSpec`` -> ``spec-modelspec``."""
    return f"{prefix}-{name.lower()}"


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _bounds(node: Schema) -> str:
    return ", ".join(text.format(node[key]) for key, text in _BOUNDS if key in node)


def type_of(node: Schema, prefix: str) -> str:
    """A field's type in words, definitions linked to their sections."""
    if "$ref" in node:
        name = _ref_name(node["$ref"])
        return f"[{name}](#{anchor(prefix, name)})"
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{json.dumps(value)}`" for value in node["enum"])
    for key in ("oneOf", "anyOf"):
        if key in node:
            options = [type_of(option, prefix) for option in node[key] if option.get("type") != "null"]
            empty = any(option.get("type") == "null" for option in node[key])
            text = " or ".join(options)
            if "discriminator" in node:
                text = f"one of {', '.join(options)}, chosen by `{node['discriminator']['propertyName']}`"
            return f"{text} or empty" if empty else text
    kind = node.get("type", "any")
    if kind == "array":
        return f"list of {type_of(node.get('items', {}), prefix)}"
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"map of string to {type_of(node['additionalProperties'], prefix)}"
    return str(kind)


def bounds_of(node: Schema) -> str:
    """The field's bounds, its nullable branch's included (``≥ 1, ≤ 200``; '' when none)."""
    found = [_bounds(node)]
    for key in ("anyOf", "oneOf"):
        found += [_bounds(option) for option in node.get(key, [])]
    if node.get("type") == "array":
        found.append(_bounds(node.get("items", {})))
    return "; ".join(text for text in found if text)


def _refs(node: Any) -> list[str]:
    """Definition names referenced anywhere under a node, in order."""
    if isinstance(node, dict):
        found = [_ref_name(node["$ref"])] if "$ref" in node else []
        for key, value in node.items():
            if key != "$ref":
                found += _refs(value)
        return found
    if isinstance(node, list):
        return [name for value in node for name in _refs(value)]
    return []


def _described(node: Schema, definitions: Schema) -> str:
    """A field without a description of its own: the description of the one definition it names."""
    names = _refs(node)
    return str(definitions[names[0]].get("description", "")) if len(names) == 1 else ""


def _reached(schema: Schema) -> list[tuple[str, Schema, list[str]]]:
    """(name, definition, field paths that reach it) breadth first from the root, each definition once."""
    definitions = schema.get("$defs", {})
    root = str(schema.get("title", "root"))
    order: list[str] = [root]
    paths: dict[str, list[str]] = {root: []}
    queue: deque[tuple[str, Schema, str]] = deque([(root, schema, "")])
    while queue:
        _, node, base = queue.popleft()
        for field, child in node.get("properties", {}).items():
            path = f"{base}{field}"
            for name in _refs(child):
                if name not in paths:
                    paths[name] = []
                    order.append(name)
                    queue.append((name, definitions[name], f"{path}[]." if "items" in child else f"{path}."))
                if path not in paths[name]:
                    paths[name].append(path)
    return [(name, schema if name == root else definitions[name], paths[name]) for name in order]


def _table(node: Schema, prefix: str, definitions: Schema) -> list[str]:
    required = set(node.get("required", []))
    lines = ["| field | type | default | bounds | what it takes |", "|---|---|---|---|---|"]
    for field, child in node.get("properties", {}).items():
        default = "required" if field in required else f"`{json.dumps(child.get('default'))}`"
        if field not in required and "default" not in child:
            default = "-"
        lines.append(
            f"| `{field}` | {type_of(child, prefix)} | {default} | {escape(bounds_of(child)) or '-'} "
            f"| {escape(child.get('description') or _described(child, definitions))} |"
        )
    return lines


def render_schema(schema: Schema, *, prefix: str, level: int = 3) -> str:
    """Markdown for a JSON Schema: the root object's table, then one section per definition it reaches.

    Args:
        schema: a JSON Schema with ``$defs`` (pydantic's ``model_json_schema()``).
        prefix: the anchors' prefix, unique per schema on a page (``spec``, ``sweep``).
        level: the heading level of each section.
    """
    lines: list[str] = []
    hashes = "#" * level
    for name, node, paths in _reached(schema):
        lines += ["", f"{hashes} {name} {{ #{anchor(prefix, name)} }}", ""]
        if paths:
            lines += ["Under " + ", ".join(f"`{path}`" for path in paths) + ".", ""]
        if node.get("description"):
            lines += [escape(node["description"], cell=False), ""]
        lines += _table(node, prefix, schema.get("$defs", {}))
    return "\n".join(lines).strip() + "\n"
