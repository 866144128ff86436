"""No import cycles in workflows/, lambdas/, state_machines/ or infra/.

The graph comes from ``tests/support/import_graph.py``: module-level and function-level imports are
both edges (a cycle hidden in a function still couples the two modules and fails on first call), and
type-only imports under ``TYPE_CHECKING`` are not (they never run). When this fails, move what the
modules share to the domain module it belongs to; a function-level import is not a fix.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.support.import_graph import cycles, import_graph


def test_no_module_imports_itself_through_others() -> None:
    # Given the import graph of the project's packages
    graph = import_graph()

    # When its cycles are listed
    found = cycles(graph)

    # Then there are none
    assert graph, "no modules found: the graph reads nothing"
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in found)


def test_a_cycle_through_a_function_level_import_is_found(tmp_path: Path) -> None:
    # Given a package whose two modules import each other, one of them only inside a function
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "alpha.py").write_text("from pkg.beta import helper\n")
    (package / "beta.py").write_text(
        textwrap.dedent(
            """
            def helper():
                from pkg import alpha
                return alpha
            """
        )
    )

    # When the graph is built and its cycles listed
    found = cycles(import_graph(tmp_path, ["pkg"]))

    # Then the cycle is reported as a closed path
    assert found == [["pkg.alpha", "pkg.beta", "pkg.alpha"]]


def test_type_checking_imports_and_relative_imports_are_read_as_python_runs_them(tmp_path: Path) -> None:
    # Given a type-only import back and a relative import forward
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "alpha.py").write_text("from .beta import helper\n")
    (package / "beta.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.alpha import x\nhelper = 1\n"
    )

    # When the graph is built
    graph = import_graph(tmp_path, ["pkg"])

    # Then the relative import is an edge and the type-only one is not, so there is no cycle
    assert graph["pkg.alpha"] == {"pkg.beta"}
    assert graph["pkg.beta"] == set()
    assert cycles(graph) == []


def test_command_modules_never_import_the_app_nor_each_other() -> None:
    # Given the modules of the command-line package and what each imports
    graph = import_graph()
    package = {name: targets for name, targets in graph.items() if name.startswith("workflows.cli.")}
    shared = {
        "workflows.cli.output",
        "workflows.cli.options",
        "workflows.cli.help",
        "workflows.cli.executions",
        "workflows.cli.canary",
        "workflows.cli.lockfile",
        # The docs' CLI reference: it reads the app (passed in), and no command imports it.
        "workflows.cli.reference",
    }
    commands = set(package) - shared - {"workflows.cli.app", "workflows.cli.__main__"}

    # When the imports of each command module within the package are listed
    reaching = {name: sorted(package[name] & (commands | {"workflows.cli.app"})) for name in sorted(commands)}

    # Then only the app imports commands, and it registers every one of them
    assert {name: targets for name, targets in reaching.items() if targets} == {
        # deployed_images is what `images` prints and what `doctor` checks, so doctor reads it there.
        "workflows.cli.doctor": ["workflows.cli.images"]
    }
    assert commands <= graph["workflows.cli.app"]
