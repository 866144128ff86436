"""Errors and validation helpers of the local SageMaker, answered the way SageMaker answers them."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

ACCOUNT = "123456789012"
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")


class ApiError(Exception):
    """An error answered the way SageMaker answers it (code, message, HTTP status, extra fields)."""

    def __init__(self, code: str, message: str | None, status: int = 400, **fields: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.fields = fields


def validation(message: str) -> ApiError:
    return ApiError("ValidationException", message)


def constraint(value: Any, member: str, rule: str) -> ApiError:
    """The API's own parameter validation text (``1 validation error detected: ...``)."""
    return validation(
        f"1 validation error detected: Value '{value}' at '{member}' failed to satisfy constraint: {rule}"
    )


def valid_name(body: dict[str, Any], key: str) -> str:
    name = body.get(key)
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise constraint(
            name,
            key[0].lower() + key[1:],
            "Member must satisfy regular expression pattern: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}",
        )
    return name


def epoch(moment: datetime) -> float:
    return moment.timestamp()


def not_found(kind: str, arn: str) -> ApiError:
    return validation(f'Could not find {kind} "{arn}".')


def already_exists(kind: str, arn: str) -> ApiError:
    return validation(f'Cannot create already existing {kind} "{arn}".')
