"""The shipped tokenizer, made independent of the container's transformers (F35).

The serving code reads ``tokenizer/tokenizer.json`` with the ``tokenizers`` library
(``artifacts/code/inference.py`` ``FileTokenizer``), so the class name a newer transformers writes
into tokenizer_config.json (``TokenizersBackend``) never reaches the container's older class lookup.
This module proves, at conversion, that this loader gives exactly the ids the converting
transformers gives, on single texts and on pairs, and records what wrote the files.
"""

from __future__ import annotations

import importlib.util
import json
from importlib.resources import files
from pathlib import Path
from types import ModuleType
from typing import Any

from workflows.artifact.manifest import TokenizerFiles
from workflows.conversion import parity
from workflows.errors import ModelSourceInvalid

SERVING_FILE = Path(str(files("artifacts") / "code" / "inference.py"))


def serving_module() -> ModuleType:
    """``code/inference.py`` as the container imports it (a module of its own, not a package member)."""
    spec = importlib.util.spec_from_file_location("deploybench_serving_code", SERVING_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _items() -> list[str | tuple[str, str]]:
    singles: list[str | tuple[str, str]] = list(parity.validation_items("embedding"))
    return singles + list(parity.validation_items("classification"))


def verify_portable(folder: Path, tokenizer: Any, *, max_length: int) -> TokenizerFiles:
    """Check that the serving code's tokenizer.json loader reproduces ``tokenizer``'s ids.

    Args:
        folder: the saved ``tokenizer/`` folder of the artifact.
        tokenizer: the transformers tokenizer the parity gate used.
        max_length: the spec's maximum sequence length (truncation is part of what must agree).

    Raises:
        ModelSourceInvalid: no tokenizer.json was written, or the two disagree on some text.
    """
    import tokenizers
    import transformers

    if not (folder / "tokenizer.json").is_file():
        raise ModelSourceInvalid(
            f"the tokenizer saved to {folder} has no tokenizer.json (a slow-only tokenizer): the container "
            "would have to rebuild it through its own transformers, whose version may not read it (F35).",
            fix="save a fast tokenizer (tokenizer.json) into the model folder",
        )
    served = serving_module().load_tokenizer(str(folder))
    items = _items()
    for item in items:
        first, second = (item, None) if isinstance(item, str) else item
        expected = tokenizer(
            [first], None if second is None else [second], truncation=True, max_length=max_length
        )
        got = served([first], None if second is None else [second], truncation=True, max_length=max_length)
        for name in ("input_ids", "attention_mask"):
            if list(expected[name][0]) != list(got[name][0]):
                raise ModelSourceInvalid(
                    f"tokenizer.json read by the tokenizers library gives other {name} than transformers for "
                    f"{item!r}: {list(got[name][0])[:12]}... against {list(expected[name][0])[:12]}...",
                    fix="save the tokenizer with tokenizer.save_pretrained(folder) from a fast tokenizer",
                )
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.is_file() else {}
    return TokenizerFiles(
        loader="tokenizers",
        tokenizer_class=str(config.get("tokenizer_class", "")),
        saved_by={"transformers": transformers.__version__, "tokenizers": tokenizers.__version__},
        checked_texts=len(items),
    )
