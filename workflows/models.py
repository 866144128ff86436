"""The two pydantic bases every deploybench model derives from.

- ``Strict``: a spec section (YAML the user writes): unknown fields are refused, so a misspelt
  setting is an error rather than silently ignored; frozen, as a spec never changes once loaded.
- ``Contract``: execution state passed between steps (Step Functions JSON): unknown fields are
  refused so that a renamed field fails loudly in tests instead of dropping data between states.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Contract(BaseModel):
    model_config = ConfigDict(extra="forbid")
