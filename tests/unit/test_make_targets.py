"""The Makefile's test target names every tier, so a tier folder added later is not silently skipped by CI."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def recipe(target: str) -> str:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    match = re.search(rf"^{target}:[^\n]*\n((?:\t[^\n]*\n)+)", text, flags=re.MULTILINE)
    assert match, f"the Makefile has no {target!r} target"
    return match.group(1)


def test_make_test_runs_every_tier_folder_exactly_once() -> None:
    # Given the tier folders that hold tests
    tiers = sorted(p.parent.name for p in (ROOT / "tests").glob("*/test_*.py"))
    # When the test target's pytest lines are read
    named = re.findall(r"\btests/(\w+)", recipe("test"))
    # Then each tier is named once, and nothing else is
    assert sorted(named) == sorted(set(tiers))


def test_make_check_runs_only_fast_tiers() -> None:
    # The habit before every commit: no engine, no serving stack, no synthesis
    named = set(re.findall(r"\btests/(\w+)", recipe("check")))
    assert named and named <= {"unit", "handlers"}
