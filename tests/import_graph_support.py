"""The import graph of the project's packages, read with ``ast`` (nothing is imported to build it).

An edge ``a -> b`` is an import of project module ``b`` anywhere in ``a``: at module level, inside a
function or method, or inside ``try``/``if`` blocks, because every one of them runs and a cycle through
a function-level import is still a cycle (it only fails later, on the first call, and it couples the two
modules just as much). Two kinds of import are not edges:

* imports under ``if TYPE_CHECKING:``, which never run and exist so that annotations can name types;
* the implicit import of a parent package (importing ``workflows.cli.run`` runs
  ``workflows/cli/__init__.py``): counting it would make every package that re-exports its own
  submodules a cycle with them, which Python resolves by design.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("workflows", "lambdas", "state_machines", "infra")


def module_name(path: Path, root: Path = ROOT) -> str:
    """``workflows/cli/run.py`` -> ``workflows.cli.run``; ``workflows/cli/__init__.py`` -> ``workflows.cli``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, Path]:
    """Every module of the project's packages, by dotted name."""
    return {
        module_name(path, root): path
        for package in packages
        for path in sorted((root / package).rglob("*.py"))
        if ".venv" not in path.parts and "cdk.out" not in path.parts
    }


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            # Only the else branch runs.
            for other in child.orelse:
                yield from _runtime_imports_of(other)
            continue
        yield from _runtime_imports_of(child)


def _runtime_imports_of(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    else:
        yield from _runtime_imports(node)


def _base(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join([*package, *([node.module] if node.module else [])])


def imports_of(module: str, path: Path, known: set[str]) -> set[str]:
    """The project modules that ``module`` imports at run time."""
    targets: set[str] = set()
    for node in _runtime_imports(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            base = _base(module, path, node)
            # ``from pkg import name``: name is a submodule or an attribute of pkg.
            candidates = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
            ]
        targets.update(_known_prefix(candidate, known) for candidate in candidates)
    targets.discard("")
    targets.discard(module)
    return targets


def _known_prefix(name: str, known: set[str]) -> str:
    parts = name.split(".")
    while parts and ".".join(parts) not in known:
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """Module -> the project modules it imports at run time."""
    modules = project_modules(root, packages)
    known = set(modules)
    return {name: imports_of(name, path, known) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a closed path ``a -> b -> ... -> a``) for every strongly connected group of modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def connect(node: str) -> None:
        # Tarjan's algorithm; the graph has a few hundred nodes, so recursion depth is no concern.
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group: set[str] = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return [_path_within(group, graph) for group in groups]


def _path_within(group: set[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest closed path through the group's smallest member."""
    start = min(group)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for target in sorted(graph[node] & group):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start, start]
                if target not in previous:
                    previous[target] = node
                    following.append(target)
        frontier = following
    return sorted(group)
