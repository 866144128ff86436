"""Fixtures the local-engine path tests share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import serving_processes
from workflows.local.engine import LocalEngine


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[LocalEngine]:
    """The local engine with the light server, per test; once it stops, no model server is left running.

    A module that needs another engine (the real serving stack, module-scoped) defines its own.
    """
    with LocalEngine(workdir=tmp_path / "engine", serving="light") as running:
        yield running
    assert serving_processes() == []
