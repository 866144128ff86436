"""The other models a ``hosting`` section co-hosts next to the run's own, and the names they may take.

Entries of ``hosting.models``: containers of a multi-container endpoint, inference components, models of
one LMI container; each is named (a container hostname, a component suffix) and no name repeats or takes
the run's own (``MAIN_MODEL``).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from workflows.models import Strict
from workflows.spec.enums import Word

# Container hostnames and component name suffixes: short, lowercase, SageMaker-name safe.
_MODEL_NAME = re.compile(r"^[a-z0-9](-?[a-z0-9]){0,15}$")
MAIN_MODEL = "main"
"""Name of the run's own model among co-hosted ones (its container hostname, its component suffix)."""


def _model_name(value: str) -> str:
    if not _MODEL_NAME.match(value) or value == MAIN_MODEL:
        raise ValueError(
            f"'{value}' cannot name a co-hosted model: use 1-16 lowercase letters, digits and single dashes, "
            f"not '{MAIN_MODEL}' (the run's own model)"
        )
    return value


class CoHostedModel(Strict):
    """Another model on the same endpoint: a container (multi-container) or a component."""

    name: str = Field(
        ..., description="1-16 lowercase letters, digits, dashes: its hostname or component suffix."
    )
    model_data_uri: str | None = Field(
        None,
        description=(
            "s3:// URI of a model.tar.gz packed for the HF inference DLC (code/inference.py); empty serves "
            "another copy of the run's own artifact."
        ),
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _model_name(value)

    @field_validator("model_data_uri")
    @classmethod
    def _uri(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("s3://"):
            raise ValueError(f"'{value}' is not an s3:// URI of a model.tar.gz")
        return value


def _unique_names(models: list[Any]) -> None:
    names = [m.name for m in models]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"co-hosted model names repeat: {repeated}; give each its own name")


class ComponentModel(CoHostedModel):
    copies: int | None = Field(
        None, ge=1, le=100, description="Copies of this component; empty: hosting.copies."
    )


class LmiModel(Strict):
    """Another Hugging Face model in the same LMI container (GPU co-hosting)."""

    name: str = Field(..., description="1-16 lowercase letters, digits, dashes: how requests name it.")
    source: Word = Field(
        ...,
        description="s3:// prefix of a Hugging Face model folder, or a Hugging Face Hub model id.",
    )
    task: Literal["embedding", "classification"] = Field(
        "embedding", description="'embedding' or 'classification'."
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _model_name(value)
