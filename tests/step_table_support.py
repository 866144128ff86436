"""What the step-table tests read: which test modules import which Lambda handler."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def handler_modules_imported(path: Path) -> set[str]:
    """``lambdas.<module>`` names a test file imports (``import``, ``from lambdas import x``, ``from lambdas.x import``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("lambdas.")}
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "lambdas":
                found |= {f"lambdas.{alias.name}" for alias in node.names}
            elif node.module.startswith("lambdas."):
                found.add(node.module)
    return found


def handler_tests() -> dict[str, list[str]]:
    """Each handler module imported by a test module (``tests/**/test_*.py``), with those test files."""
    covered: dict[str, list[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        for module in handler_modules_imported(path):
            covered.setdefault(module, []).append(str(path.relative_to(TESTS)))
    return covered
