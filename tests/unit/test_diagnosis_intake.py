"""Pasted files of any size and any bytes: the tail of a long log, a clear refusal for the rest."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from workflows.diagnosis.intake import READ_BYTES, UnreadablePaste, read_pasted, read_pasted_file

FAILURE = b"ModuleNotFoundError: No module named 'onnxruntime'\n"


def test_a_log_longer_than_the_limit_is_read_from_its_tail_with_a_note(tmp_path: Path) -> None:
    # Given a log of 3 MiB of healthy lines whose failure is its last line
    path = tmp_path / "long.log"
    path.write_bytes(b"2026-12-01T04:10:33,120 [INFO ] Backend response time: 4\n" * 55_000 + FAILURE)
    # When it is read
    pasted = read_pasted_file(path)
    # Then only its tail is read, from a whole line on, with the failure, and a note says so
    assert len(pasted.text.encode()) <= READ_BYTES
    assert pasted.text.startswith("2026-12-01T04:10:33,120")
    assert pasted.text.endswith(FAILURE.decode())
    assert len(pasted.notes) == 1 and "only its last" in pasted.notes[0]


def test_a_stream_longer_than_the_limit_keeps_its_tail() -> None:
    data = b"x" * (5 * READ_BYTES) + b"\n" + FAILURE
    pasted = read_pasted(io.BytesIO(data), name="stdin")
    assert pasted.text == FAILURE.decode()
    assert f"stdin is {len(data) / (1 << 20):.1f} MiB" in pasted.notes[0]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "is empty"),
        (b" \n\t\n", "is empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "is a binary file"),
    ],
)
def test_an_empty_or_binary_file_is_refused_naming_the_problem(data: bytes, problem: str) -> None:
    with pytest.raises(UnreadablePaste, match=problem):
        read_pasted(io.BytesIO(data), name="paste.log")


def test_bytes_that_are_not_utf8_are_replaced_and_noted() -> None:
    pasted = read_pasted(io.BytesIO(b"caf\xe9 \xff\n" + FAILURE), name="latin1.log")
    assert pasted.text.endswith(FAILURE.decode())
    assert pasted.notes == ["latin1.log: 2 byte sequences were not UTF-8 and were replaced (U+FFFD)"]


def test_utf16_with_its_mark_is_text() -> None:
    pasted = read_pasted(io.BytesIO(FAILURE.decode().encode("utf-16")), name="notepad.txt")
    assert pasted.text == FAILURE.decode()
