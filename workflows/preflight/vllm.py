"""vLLM: the architecture is in its registry (F25) and the DLC is told what to serve (F26)."""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from typing import Any

import yaml

from workflows.contracts import Finding


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    return yaml.safe_load((files("workflows") / "data" / "vllm.yaml").read_text(encoding="utf-8"))


def check_architecture(architecture: str) -> list[Finding]:
    """F25: vLLM refuses to start on an architecture it does not support (DeBERTa-v2)."""
    table = _table()
    if architecture in table["supported"]:
        return []
    known_bad = architecture in table["unsupported"]
    return [
        Finding(
            id="F25",
            severity="blocking" if known_bad else "warning",
            message=(
                f"vLLM does not support {architecture}: it stops with \"Model architectures ['{architecture}'] "
                'are not supported".'
                if known_bad
                else f"{architecture} is not in the vLLM table (checked {table['checked']}); vLLM may refuse it."
            ),
            fix="serve it with the HF DLC (real-time or serverless), or LMI, which falls back to Accelerate",
            evidence=architecture,
        )
    ]


def check_environment(*, environment: dict[str, str], model_id: str, task: str) -> list[Finding]:
    """F26: the vLLM DLC ignores CLI args and maps SM_VLLM_FOO=bar to --foo bar; without the right
    variables it serves a default model (Qwen3-0.6B) and still passes its health check."""
    table = _table()
    wanted: dict[str, str | None] = dict(table["required_env"])
    wanted["SM_VLLM_MODEL"] = model_id
    convert = table["convert_by_task"].get(task)
    if convert:
        wanted["SM_VLLM_CONVERT"] = convert
    wrong = []
    for key, value in wanted.items():
        got = environment.get(key)
        if not got:
            wrong.append(f"{key} is not set")
        elif value is not None and got != value:
            wrong.append(f"{key}={got!r}, expected {value!r}")
    if not wrong:
        return []
    return [
        Finding(
            id="F26",
            severity="blocking",
            message="the vLLM container would not serve the requested model: " + "; ".join(wrong) + ".",
            fix="set "
            + ", ".join(f"{k}={v if v is not None else '<value>'}" for k, v in wanted.items())
            + "; after start, compare /v1/models with the request",
            evidence="; ".join(wrong),
        )
    ]
