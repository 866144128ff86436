"""The conversion cache: converted artifact folders addressed by everything that made them.

An entry's key is the sha256 of (1) every file of the model folder, (2) the spec's convert and
pack sections, the task, the sequence length and the serving plan (device, provider, pinned
onnxruntime), and (3) the converter's version: the source of the conversion code and the
serving code it copies, and the versions of the libraries that export, fuse and quantize. A
change to any input is a new key, so an entry is never served for inputs it was not built from;
a hit is re-verified file by file (size and sha256) against its manifest before it is served.

Entries live in a local folder (``<root>/<key>/artifact`` plus ``inputs.json``) or under an S3
prefix (``conversions/<key>/...``, ``inputs.json`` written last, so a half-uploaded entry is no
entry). They have their own bounds (size, and age since last use), applied after every store;
the janitor's TTL covers run prefixes only and never reaches them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from importlib.resources import files
from pathlib import Path
from typing import Any

from workflows.contracts import ArtifactManifest, ConversionCacheOutcome, StepRequest
from workflows.conversion.cache_stores import LocalStore, Store
from workflows.conversion.manifest import MANIFEST_FILE, read_manifest, verify_files
from workflows.errors import ArtifactIncomplete
from workflows.settings import Settings

# The model files' digests by file state (DigestMemo), beside a local store's entries.
DIGESTS_FILE = ".digests.json"
# Libraries whose version changes the graph, its weights or what the artifact pins.
CONVERTER_LIBRARIES = ("onnxruntime", "onnx", "torch", "transformers", "tokenizers", "numpy")
# The code that builds an artifact: the conversion package (build.py: the pipeline), its reduced-precision
# builders and serving plan, the validation texts, and the serving code copied into code/.
CONVERTER_SOURCES = (
    "workflows/conversion",
    "workflows/gpu",
    "workflows/benchmark/texts.py",
    "workflows/artifact/manifest.py",
    "artifacts/code",
)
ROOT = Path(str(files("workflows"))).parent


@dataclass(frozen=True)
class CacheBounds:
    max_bytes: int
    max_age_s: float

    @classmethod
    def from_settings(cls, settings: Settings) -> CacheBounds:
        return cls(
            max_bytes=int(settings.conversion_cache_max_gib * (1 << 30)),
            max_age_s=settings.conversion_cache_max_age_days * 86400,
        )


def _digest_file(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


class DigestMemo:
    """Files' sha256 by file state, so that an unchanged model folder is read once, not on every run.

    A file's state is its resolved path, size, mtime_ns, ctime_ns and inode: a rewrite changes the
    mtime and the ctime (which no utime call can set back), a replacement changes the inode, so any
    change to a file's content is a new state and is hashed again. Kept as JSON at ``path`` (None:
    in this process only); a memo that cannot be read is an empty one.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._known: dict[str, list[Any]] = {}
        self._changed = False
        if path is not None:
            with contextlib.suppress(OSError, ValueError):
                loaded = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(loaded, dict):
                    self._known = loaded

    def digest(self, file: Path) -> str:
        stat = file.stat()
        state = [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]
        name = str(file.resolve())
        known = self._known.get(name)
        if isinstance(known, list) and known[:-1] == state:
            return str(known[-1])
        digest = _digest_file(file)
        self._known[name] = [*state, digest]
        self._changed = True
        return digest

    def save(self) -> None:
        """Write the memo atomically (a concurrent run's write may win: both are correct)."""
        if self.path is None or not self._changed:
            return
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_name(f"{self.path.name}.{os.getpid()}")
            partial.write_text(json.dumps(self._known), encoding="utf-8")
            os.replace(partial, self.path)
        self._changed = False


def folder_digest(root: Path, memo: DigestMemo | None = None) -> str:
    """sha256 over every file's relative path and content (names and bytes, nothing else)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update((memo.digest(path) if memo is not None else _digest_file(path)).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def _library_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "absent"


@lru_cache(maxsize=1)
def converter_version() -> str:
    """sha256 of the converter's source and its libraries' versions (one per process)."""
    digest = hashlib.sha256()
    for name in CONVERTER_LIBRARIES:
        digest.update(f"{name}=={_library_version(name)}\n".encode())
    for relative in CONVERTER_SOURCES:
        path = ROOT / relative
        sources = (
            [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.suffix in (".py", ".txt"))
        )
        # These modules decide where an artifact is kept, never what it holds.
        for source in (s for s in sources if s.name not in ("cache.py", "cache_stores.py")):
            digest.update(source.relative_to(ROOT).as_posix().encode())
            digest.update(_digest_file(source).encode())
    return digest.hexdigest()


def cache_inputs(request: StepRequest, source: Path, memo: DigestMemo | None = None) -> dict[str, Any]:
    """Everything the artifact depends on, as one JSON-able document (its sha256 is the key).

    Args:
        memo: the model files' digests by file state (None: every file is read).
    """
    import onnxruntime

    from workflows.gpu.plan import serving_plan

    spec = request.spec
    return {
        "model_files": folder_digest(source, memo),
        # Every model setting but where the files came from (their content is model_files).
        "model": spec.model.model_dump(mode="json", exclude={"source", "token_secret"}),
        "convert": spec.convert.model_dump(mode="json"),
        "pack": spec.pack.model_dump(mode="json"),
        "serving": serving_plan(spec, onnxruntime.__version__).model_dump(mode="json"),
        "converter": converter_version(),
    }


def cache_key(inputs: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def prune(store: Store, bounds: CacheBounds, *, keep: str, now: float | None = None) -> list[str]:
    """Remove entries unused for longer than the age bound, then the least recently used until
    the rest fit the size bound; ``keep`` (the entry just stored or served) stays. Returns the
    removed keys."""
    moment = time.time() if now is None else now
    entries = store.entries()
    total = sum(entry.size_bytes for entry in entries if entry.key == keep)
    removed = []
    for entry in sorted(entries, key=lambda entry: entry.last_used, reverse=True):
        if entry.key == keep:
            continue
        if moment - entry.last_used > bounds.max_age_s or total + entry.size_bytes > bounds.max_bytes:
            store.remove(entry.key)
            removed.append(entry.key)
            continue
        total += entry.size_bytes
    return removed


def _served(store: Store, key: str, out: Path) -> ArtifactManifest | None:
    """The entry copied into ``out`` and verified file by file, or None (``out`` left empty)."""
    from workflows.conversion.output import staged_folder

    try:
        with staged_folder(out) as staging:
            if not store.fetch(key, staging):
                raise LookupError(key)
            manifest = read_manifest(staging)
            verify_files(staging, manifest)
    except LookupError:
        return None
    except ArtifactIncomplete:
        store.remove(key)  # damaged: a cache must never serve it, and the next run rebuilds it
        return None
    return manifest


def converted(
    request: StepRequest,
    *,
    source: Path,
    build: Callable[[], ArtifactManifest],
    out: Path,
    store: Store | None,
    bounds: CacheBounds,
    hub: dict[str, Any] | None = None,
) -> tuple[ArtifactManifest, ConversionCacheOutcome]:
    """The artifact for ``request`` in ``out``: served from ``store`` when an entry with the same
    inputs exists, otherwise made by ``build`` (which writes it to ``out``) and stored.

    Args:
        hub: the Hub repo, revision and commit of an ``hf://`` source: part of the key, since the
            manifest records them.
    """
    if store is None:
        return build(), ConversionCacheOutcome()
    # Beside a local store's entries; an S3 store's runs (Lambdas) keep it for one process.
    memo = DigestMemo(store.root / DIGESTS_FILE if isinstance(store, LocalStore) else None)
    inputs = cache_inputs(request, source, memo)
    memo.save()
    if hub is not None:
        inputs["hub"] = hub
    key = cache_key(inputs)
    with store.claim(key):
        manifest = _served(store, key, out)
        status = "hit"
        if manifest is None:
            status = "miss"
            manifest = build()
            inputs["stored_at"] = datetime.now(UTC).isoformat()
            store.put(key, out, inputs)
    prune(store, bounds, keep=key)
    return manifest, ConversionCacheOutcome(status=status, key=key, location=store.where(key))


__all__ = [
    "MANIFEST_FILE",
    "CacheBounds",
    "DigestMemo",
    "converted",
    "prune",
]
