"""A pasted file, read so that any file gets an answer in seconds: the tail of a long log, text of any bytes.

A failure ends a log: a 93 MB CloudWatch export of a healthy day holds its one failure in its last
lines, and reading all of it (every line an evidence item, every rule against every item) took more
than two minutes and 2.7 GB. Only the last READ_BYTES are read, with a note that says so. Bytes that
are not UTF-8 are replaced (and noted); a file that is empty or binary is refused with a message that
names the problem.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

# 256 KiB is ~2,300 log lines (a failure's lines, and hours of a worker's retries after them). Read and matched, start-up
# included, on a shared 2-core machine (bench/diagnosis_large_input.py): 512 KiB took about 3 s when the readings
# were few, and 8.5-10.4 s once they had grown, past the 10 s an answer is held to; 1 MiB took 7.5-8.7 s even earlier.
READ_BYTES = 1 << 18
_SNIFF_BYTES = 8192
_CHUNK = 1 << 20


class UnreadablePaste(ValueError):
    """The pasted file holds nothing to diagnose (empty, binary); the message names the problem."""


@dataclass
class Pasted:
    """The text to diagnose and what reading it left out."""

    text: str
    notes: list[str] = field(default_factory=list)


def _tail(stream: BinaryIO, size: int | None) -> tuple[bytes, int]:
    """The last READ_BYTES of the stream, and how many bytes it had."""
    if size is not None and size > READ_BYTES:
        stream.seek(size - READ_BYTES)
        return stream.read(READ_BYTES), size
    kept = b""
    total = 0
    while chunk := stream.read(_CHUNK):
        total += len(chunk)
        kept = (kept + chunk)[-READ_BYTES:]
    return kept, total


def _binary(data: bytes) -> bool:
    """NUL bytes in text are rare; in images, archives, executables and model files they are everywhere."""
    return b"\x00" in data[:_SNIFF_BYTES] and not data.startswith((b"\xff\xfe", b"\xfe\xff"))


def _megabytes(count: int) -> str:
    return f"{count / (1 << 20):.1f} MiB" if count >= 1 << 20 else f"{count} bytes"


def read_pasted(stream: BinaryIO, *, name: str, size: int | None = None) -> Pasted:
    """The text of a pasted file or stream: all of it, or its last READ_BYTES.

    Args:
        stream: the bytes (a file opened in binary mode, or stdin's buffer).
        name: what to call it in notes and errors.
        size: its size when known (a file): the tail is then read without reading the rest.

    Raises:
        UnreadablePaste: the file is empty, or binary.
    """
    data, total = _tail(stream, size)
    if not data.strip():
        raise UnreadablePaste(f"{name} is empty ({total} bytes, nothing but whitespace)")
    if _binary(data):
        raise UnreadablePaste(
            f"{name} is a binary file ({_megabytes(total)}, NUL bytes in its first {_SNIFF_BYTES} bytes), "
            "not text"
        )
    notes = []
    if total > len(data):
        data = data[data.find(b"\n") + 1 :] or data  # from the first whole line on
        notes.append(
            f"{name} is {_megabytes(total)}: only its last {_megabytes(len(data))} were read "
            "(the end of a log holds its failure); cut the excerpt around the failure to read another part"
        )
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", errors="replace")
    else:
        text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    replaced = text.count("\ufffd")
    if replaced:
        notes.append(f"{name}: {replaced} byte sequences were not UTF-8 and were replaced (U+FFFD)")
    return Pasted(text, notes)


def read_pasted_file(path: Path) -> Pasted:
    """``read_pasted`` for a file on disk (its tail is read without reading the rest)."""
    with path.open("rb") as stream:
        return read_pasted(stream, name=str(path), size=os.fstat(stream.fileno()).st_size)
