"""Each package says what it is, and the package map of docs/contributing.md is what the packages say."""

from __future__ import annotations

import re

import pytest

from tests.support.package_map import PAGE, ROOT, docstring, packages, page_block, render


@pytest.mark.parametrize("package", packages(), ids=lambda path: path.name)
def test_every_package_says_its_role_and_its_place_in_the_layers(package) -> None:
    # Given a package's docstring
    text = docstring(package)

    # Then it has a role paragraph and says what it imports and what imports it
    assert text, f"{package}/__init__.py has no docstring"
    assert len(text.split("\n\n")) >= 2, f"{package}: one paragraph for its role, one for its layer"
    assert re.search(r"\bimport", text.split("\n\n", 1)[1]), (
        f"{package}: say what it imports and what imports it"
    )


def test_the_docs_package_map_is_generated_and_up_to_date() -> None:
    # Given the package map block of docs/contributing.md
    block = page_block(PAGE.read_text())

    # Then it is the rendering of the packages' own docstrings
    assert block, "docs/contributing.md lacks the packages block"
    assert block == render(), "the docs' package map is stale: python -m tests.support.package_map --write"


def test_the_workflows_root_keeps_only_shared_modules() -> None:
    # Given the modules at the workflows/ root
    root = ROOT / "workflows"
    modules = sorted(path.name for path in root.glob("*.py"))

    # Then there are at most eight files, the package marker included
    assert len(modules) <= 8, f"workflows/ root holds {modules}: move domain code into its package"
