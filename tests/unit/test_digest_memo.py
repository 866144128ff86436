"""The conversion cache's digest memo: an unchanged file is read once, a changed one always again."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from workflows.conversion import cache
from workflows.conversion.cache import DigestMemo, folder_digest


def model_folder(root: Path) -> Path:
    folder = root / "model"
    (folder / "tokenizer").mkdir(parents=True)
    (folder / "weights.bin").write_bytes(b"a" * 4096)
    (folder / "tokenizer" / "vocab.txt").write_text("hello\nworld\n", encoding="utf-8")
    return folder


def counted_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    reads: list[Path] = []
    original = cache._digest_file

    def reading(path: Path) -> str:
        reads.append(path)
        return original(path)

    monkeypatch.setattr(cache, "_digest_file", reading)
    return reads


def test_an_unchanged_folder_is_read_once_across_memos(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a model folder digested once through a memo kept on disk
    folder = model_folder(tmp_path)
    memo_path = tmp_path / "store" / cache.DIGESTS_FILE
    first_memo = DigestMemo(memo_path)
    first = folder_digest(folder, first_memo)
    first_memo.save()
    reads = counted_reads(monkeypatch)

    # When a later run (a new memo read from disk) digests the same, untouched folder
    second = folder_digest(folder, DigestMemo(memo_path))

    # Then no file is read again and the digest is the one computed without a memo
    assert reads == []
    assert second == first == folder_digest(folder)


def test_a_rewritten_file_of_the_same_size_is_read_again(tmp_path: Path) -> None:
    # Given a folder digested through a saved memo
    folder = model_folder(tmp_path)
    memo_path = tmp_path / cache.DIGESTS_FILE
    memo = DigestMemo(memo_path)
    before = folder_digest(folder, memo)
    memo.save()

    # When one file is rewritten in place with new bytes of the same size and a new mtime
    weights = folder / "weights.bin"
    stat = weights.stat()
    weights.write_bytes(b"b" * 4096)
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))

    # Then the digest changes (the cache key with it) and matches a fresh reading
    after = folder_digest(folder, DigestMemo(memo_path))
    assert after != before
    assert after == folder_digest(folder)


def test_a_rewrite_that_restores_the_mtime_is_still_read_again(tmp_path: Path) -> None:
    # Given a file digested through a memo
    folder = model_folder(tmp_path)
    memo = DigestMemo(tmp_path / cache.DIGESTS_FILE)
    weights = folder / "weights.bin"
    stat = weights.stat()
    memo.digest(weights)

    # When it is rewritten (same size) and its mtime set back to what it was
    weights.write_bytes(b"c" * 4096)
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    # Then the ctime (which utime cannot restore) marks a new state: the new content's digest
    assert memo.digest(weights) == hashlib.sha256(b"c" * 4096).hexdigest()


def test_an_unreadable_memo_is_an_empty_one(tmp_path: Path) -> None:
    # Given a memo file that is not JSON
    folder = model_folder(tmp_path)
    memo_path = tmp_path / cache.DIGESTS_FILE
    memo_path.write_text("{not json", encoding="utf-8")

    # When a folder is digested through it and the memo saved
    memo = DigestMemo(memo_path)
    digest = folder_digest(folder, memo)
    memo.save()

    # Then every file was read, and the memo on disk is whole again
    assert digest == folder_digest(folder)
    assert str((folder / "weights.bin").resolve()) in DigestMemo(memo_path)._known
