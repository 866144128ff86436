"""How an embedding model pools: read from its sentence-transformers layout, else chosen by the spec.

A sentence-transformers folder says it in ``modules.json`` (the module list: Transformer, Pooling,
optionally Normalize) and in the Pooling module's ``config.json`` (``1_Pooling/`` by convention,
the path modules.json gives). The exported graph pools exactly so, and parity compares it with the
same pooling in PyTorch. A layout the graph cannot reproduce (max or weighted pooling, a Dense
projection after pooling) is refused rather than served with different vectors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workflows.errors import ModelSourceInvalid, SpecInvalid

MODULES_FILE = "modules.json"
# sentence-transformers' Pooling config keys, per mode the graph reproduces.
POOLING_KEYS = {
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_cls_token": "cls",
    "pooling_mode_lasttoken": "last_token",
}
NAMED_MODES = {"mean": "mean", "cls": "cls", "lasttoken": "last_token", "last_token": "last_token"}
UNSUPPORTED_KEYS = (
    "pooling_mode_max_tokens",
    "pooling_mode_mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens",
)
# Modules that only route the text through the encoder and pool: anything else changes the vectors.
PASS_THROUGH = ("Transformer", "Pooling", "Normalize")


@dataclass(frozen=True)
class Pooling:
    mode: str
    normalize: bool
    basis: str


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ModelSourceInvalid(
            f"{path} cannot be read as JSON: {error}.", fix="re-save the model"
        ) from None


def layout_pooling(folder: Path) -> Pooling | None:
    """The pooling a sentence-transformers folder declares; None when the folder has no modules.json.

    Raises:
        ModelSourceInvalid: the layout pools or projects in a way the graph cannot reproduce.
    """
    modules_path = folder / MODULES_FILE
    if not modules_path.is_file():
        return None
    modules = _json(modules_path)
    if not isinstance(modules, list):
        raise ModelSourceInvalid(f"{modules_path} is not a list of modules.", fix="re-save the model")
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules if isinstance(m, dict)]
    extra = [kind for kind in kinds if kind not in PASS_THROUGH]
    if extra:
        raise ModelSourceInvalid(
            f"{modules_path} has module(s) {extra} after the encoder; deploybench exports the encoder and its "
            "pooling only, so the served vectors would differ from the model's.",
            fix="use a model whose modules are Transformer, Pooling and Normalize, or fold the extra layers in",
        )
    pooling_module = next((m for m in modules if str(m.get("type", "")).endswith("Pooling")), None)
    normalize = "Normalize" in kinds
    if pooling_module is None:
        return Pooling("mean", normalize, f"{MODULES_FILE} (no Pooling module: mean)")
    config_path = folder / str(pooling_module.get("path") or "1_Pooling") / "config.json"
    config = _json(config_path) if config_path.is_file() else {}
    unsupported = [key for key in UNSUPPORTED_KEYS if config.get(key)]
    modes = [mode for key, mode in POOLING_KEYS.items() if config.get(key)]
    named = config.get("pooling_mode")  # the single-key form of newer sentence-transformers
    if isinstance(named, str):
        if named in NAMED_MODES:
            modes.append(NAMED_MODES[named])
        else:
            unsupported.append(f"pooling_mode {named!r}")
    if unsupported or len(modes) > 1:
        raise ModelSourceInvalid(
            f"{config_path} asks for {unsupported + modes}; the graph pools by exactly one of mean, cls or "
            "last token.",
            fix="use a model pooled by one of mean, CLS or last token",
        )
    modes = sorted(set(modes))
    mode = modes[0] if modes else "mean"
    where = config_path.relative_to(folder).as_posix() if config_path.is_file() else MODULES_FILE
    return Pooling(mode, normalize, f"{where} ({mode}{', Normalize' if normalize else ''})")


def choose_pooling(folder: Path, *, pooling: str, normalize: bool | None) -> Pooling:
    """The pooling to export: the layout's when the folder has one, else the spec's (mean, normalised).

    Raises:
        SpecInvalid: the spec sets a pooling or normalisation the layout contradicts.
        ModelSourceInvalid: see ``layout_pooling``.
    """
    declared = layout_pooling(folder)
    if declared is None:
        mode = "mean" if pooling == "auto" else pooling
        chosen = True if normalize is None else normalize
        return Pooling(
            mode, chosen, f"model.pooling {pooling!r}, model.normalize {normalize} (no {MODULES_FILE})"
        )
    if pooling not in ("auto", declared.mode) or normalize not in (None, declared.normalize):
        raise SpecInvalid(
            f"model.pooling {pooling!r} / model.normalize {normalize} contradict the model's own layout: "
            f"{declared.basis}, normalize {declared.normalize}; vectors pooled otherwise would not be the model's.",
            fix="drop model.pooling and model.normalize (the layout decides), or set them to the layout's values",
        )
    return declared
