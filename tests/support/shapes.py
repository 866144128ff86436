"""Validate a value against a botocore shape: what a request must be, and what a parsed response may be.

botocore validates every request a client sends (``ParamValidator``) but parses a response without
checking it; a local service's answers are checked here with the same validator, plus the enums and
the patterns Python's ``re`` can read (botocore's ``\\p{...}`` classes are Java's, and skipped).
"""

from __future__ import annotations

import re
from typing import Any

from botocore.model import Shape
from botocore.response import StreamingBody
from botocore.validate import ParamValidator


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "ResponseMetadata"}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, StreamingBody):
        return value.read()
    return value


def _enums_and_patterns(value: Any, shape: Shape, path: str) -> list[str]:
    if isinstance(value, dict) and shape.type_name == "structure":
        return [
            problem
            for key, item in value.items()
            if key in shape.members
            for problem in _enums_and_patterns(item, shape.members[key], f"{path}.{key}")
        ]
    if isinstance(value, list) and shape.type_name == "list":
        return [
            p for i, item in enumerate(value) for p in _enums_and_patterns(item, shape.member, f"{path}[{i}]")
        ]
    if not isinstance(value, str):
        return []
    if shape.enum and value not in shape.enum:
        return [f"{path}: {value!r} is not one of {shape.enum}"]
    pattern = shape.metadata.get("pattern")
    if pattern and "\\p" not in pattern and not re.fullmatch(pattern, value):
        return [f"{path}: {value!r} does not match {pattern}"]
    return []


def shape_problems(value: Any, shape: Shape | None) -> list[str]:
    """What in ``value`` (a request, or a parsed response) breaks ``shape``; [] when it fits.

    A response's streaming body is read (and so consumed): pass a copy where it is read later.
    """
    if shape is None:
        return [] if not _plain(value) else [f"no output shape, got {value}"]
    plain = _plain(value)
    report = ParamValidator().validate(plain, shape)
    problems = report.generate_report().splitlines()[1:] if report.has_errors() else []
    return problems + _enums_and_patterns(plain, shape, shape.name)


def operation_problems(client: Any, operation: str, value: Any, *, output: bool = True) -> list[str]:
    """``shape_problems`` against the input or output shape of a client's operation (by method name)."""
    model = client.meta.service_model.operation_model(client.meta.method_to_api_mapping[operation])
    return shape_problems(value, model.output_shape if output else model.input_shape)
