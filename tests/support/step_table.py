"""What the step-table tests read: which test modules import which Lambda handler."""

from __future__ import annotations

from pathlib import Path

from state_machines import steps_index

TESTS = Path(__file__).resolve().parents[1]


def handler_tests() -> dict[str, list[str]]:
    """Each handler module imported by a test module, with those files relative to ``tests/``."""
    return {
        module: [path.removeprefix("tests/") for path in paths]
        for module, paths in steps_index.handler_tests(TESTS).items()
    }
