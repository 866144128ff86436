"""One example spec per task under examples/task-*.yaml: each validates offline and names its task's shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT
from workflows.spec.model import TASKS, hub_source
from workflows.spec.pipeline import load_spec

EXAMPLES = sorted((ROOT / "examples").glob("task-*.yaml"))


def test_every_task_has_exactly_one_example() -> None:
    assert sorted(load_spec(path).model.task for path in EXAMPLES) == sorted(TASKS)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_a_task_example_validates_with_a_hub_source_and_documents_its_request_and_response(
    path: Path,
) -> None:
    spec = load_spec(path)
    assert spec.name == path.stem
    assert hub_source(spec.model.source) is not None
    text = path.read_text(encoding="utf-8")
    assert "Request:" in text or "Pairs:" in text
    assert "Response:" in text or "->" in text
