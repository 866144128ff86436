"""The ``deploybench`` command line: one module per command, registered in ``workflows.cli.app``.

Every command follows ``workflows/cli/output.py``: the result on stdout (``--json`` for scripts),
errors and warnings on stderr, the documented exit codes, ``--region``/``--profile`` where AWS is
reached. Help text comes through ``workflows/cli/help.py``.

The top layer: it imports the engines (``workflows.execution``, ``workflows.local``), the steps and
the domain packages; nothing in the project imports it (the console script and ``python -m`` run it).
"""

from __future__ import annotations

from typing import Any


def main(argv: list[str] | None = None) -> Any:
    """Run the command line (the ``deploybench`` console script and ``python -m workflows.cli``)."""
    # Imported here so that importing a command module (workflows.cli.run, ...) never loads the app
    # and, through it, every other command.
    from workflows.cli.app import app

    return app(argv)
