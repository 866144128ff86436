"""Every import a handler can reach, read from the source (imports inside functions included)."""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import re
import sys
from pathlib import Path

from infra.constants import CODE_PACKAGES, ROOT

# Modules that import whole packages at run time (pkgutil.iter_modules + importlib), whose imports the
# source does not show. None does now: each hosting mode declares its checks, and the mode table
# (workflows.hosting.modes) imports every mode by name.
DISCOVERS: dict[str, tuple[str, ...]] = {}


def _package_modules(package: str) -> list[str]:
    folder = ROOT / package.replace(".", "/")
    return [f"{package}.{path.stem}" for path in sorted(folder.glob("*.py")) if path.stem != "__init__"]


def _module_file(name: str) -> Path | None:
    base = ROOT / name.replace(".", "/")
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Imports under ``if TYPE_CHECKING:`` never run."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def _imports(module: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if _type_checking_only(node, parents):
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            # ``from package import module`` names a submodule when such a file exists
            found.update(
                f"{base}.{alias.name}" for alias in node.names if _module_file(f"{base}.{alias.name}")
            )
    return found


def reachable(handler_module: str) -> tuple[set[str], set[str]]:
    """``(project modules, third-party top-level names)`` reachable from ``handler_module``."""
    seen: set[str] = set()
    third_party: set[str] = set()
    stack = [handler_module]
    while stack:
        module = stack.pop()
        if module in seen:
            continue
        seen.add(module)
        path = _module_file(module)
        if path is None:
            continue
        for package in DISCOVERS.get(module, ()):
            stack.extend(_package_modules(package))
        for name in _imports(module, path):
            top = name.split(".")[0]
            if top in CODE_PACKAGES:
                parts = name.split(".")
                stack.extend(".".join(parts[: i + 1]) for i in range(len(parts)))
            elif top not in sys.stdlib_module_names and top != "__future__":
                third_party.add(top)
    return seen, third_party


def distributions_of(tops: set[str]) -> dict[str, set[str]]:
    """Top-level import name -> the distributions providing it (empty: none installed provides it)."""
    known = metadata.packages_distributions()
    return {top: {re.sub(r"[-_.]+", "-", d).lower() for d in known.get(top, [])} for top in tops}
