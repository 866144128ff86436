"""F35: an artifact whose tokenizer files the container's transformers cannot read.

transformers 5 writes ``tokenizer_class: TokenizersBackend`` (and other classes and keys 4.x does not
know) into tokenizer_config.json; a container with transformers 4.x then answers the first request
with "Tokenizer class TokenizersBackend does not exist or is not currently imported." The converted
artifact avoids the class lookup altogether (its serving code reads tokenizer.json with the
tokenizers library); an artifact that does not is refused here, with the version pair and the fix.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

from workflows.artifact.manifest import TokenizerFiles
from workflows.contracts import Finding

_IMAGE_TRANSFORMERS = re.compile(r"transformers(\d+(?:\.\d+)*)")
# Classes only transformers 5 defines: a 4.x container's AutoTokenizer cannot import them.
TRANSFORMERS_5_ONLY_CLASSES = frozenset({"TokenizersBackend"})


def image_transformers(image: str) -> str | None:
    """The transformers version an HF DLC tag names (``...:2.6.0-transformers4.51.3-cpu-...``), or None."""
    match = _IMAGE_TRANSFORMERS.search(image.rsplit(":", 1)[-1])
    return match.group(1) if match else None


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def serving_reads_tokenizer_json(code: str) -> bool:
    """The serving code loads tokenizer.json with the tokenizers library (the portable route)."""
    return "Tokenizer.from_file" in code and "tokenizer.json" in code


def check_tokenizer_portability(
    *, code: str, tokenizer_dir: Path, tokenizer: TokenizerFiles | None, image: str
) -> list[Finding]:
    """F35: tokenizer files written by a newer transformers than the image's, read through its class lookup.

    Args:
        code: code/inference.py.
        tokenizer_dir: the artifact's tokenizer/ folder.
        tokenizer: the manifest's record of what wrote the files, if any.
        image: the serving image URI (its tag names its transformers).
    """
    container = image_transformers(image)
    if container is None:
        return []
    if serving_reads_tokenizer_json(code) and (tokenizer_dir / "tokenizer.json").is_file():
        return []
    config_path = tokenizer_dir / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.is_file() else {}
    tokenizer_class = str(config.get("tokenizer_class") or (tokenizer.tokenizer_class if tokenizer else ""))
    saved = (tokenizer.saved_by.get("transformers") if tokenizer else None) or str(
        config.get("transformers_version") or ""
    )
    newer_major = bool(saved) and _version(saved)[:1] > _version(container)[:1]
    newer_minor = bool(saved) and _version(saved)[:2] > _version(container)[:2]
    unknown_class = tokenizer_class in TRANSFORMERS_5_ONLY_CLASSES and _version(container)[0] < 5
    if not (newer_minor or unknown_class):
        return []
    # Within one major the files mostly still load; across majors (or with a 5-only class) they do not.
    severity: Literal["blocking", "warning"] = "blocking" if newer_major or unknown_class else "warning"
    return [
        Finding(
            id="F35",
            severity=severity,
            message=f"the tokenizer was saved by transformers {saved or '5.x'} (tokenizer_class {tokenizer_class or '?'}) "
            f"and the serving code loads it through transformers' class lookup, but the image has transformers "
            f"{container}: the endpoint would pass its health check and fail the first request with "
            f'"Tokenizer class {tokenizer_class or "TokenizersBackend"} does not exist or is not currently imported."',
            fix="convert again with deploybench (its serving code reads tokenizer.json with the tokenizers library), "
            f"or choose an image whose transformers is at least {saved or '5.0'} (hosting.image_version)",
            evidence=f"saved by transformers {saved or '?'}, image {image}",
        )
    ]
