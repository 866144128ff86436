"""Write an artifact folder so that it exists complete or not at all."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from workflows.errors import OutputNotWritable


def _not_writable(path: Path, error: OSError) -> OutputNotWritable:
    return OutputNotWritable(
        f"cannot write {path}: {error.strerror or error}.",
        fix="choose an output folder in a writable directory (its parent must be a directory you can write)",
    )


@contextlib.contextmanager
def staged_folder(out: Path) -> Iterator[Path]:
    """Yield a sibling staging folder; rename it to ``out`` on success, delete it on failure.

    The rename is atomic on one filesystem, so a reader never sees a half-written ``out``.

    Raises:
        OutputNotWritable: ``out`` holds files already, or its parent cannot be written.
    """
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise OutputNotWritable(
            f"{out} already exists and is not an empty folder.",
            fix="choose a new output folder, or delete the old one first",
        )
    staging = out.parent / f".{out.name}.partial-{os.getpid()}"
    try:
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
    except OSError as error:
        raise _not_writable(out, error) from None
    try:
        yield staging
        if out.exists():
            out.rmdir()
        os.replace(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
