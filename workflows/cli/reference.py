"""The CLI reference of the docs site, rendered from the typer app itself (``workflows.cli.app``).

Each command's usage line, help text and every argument and option, in the words ``-h`` prints
(``workflows/cli/help.py``), in the order the app registers them. ``docs/hooks.py`` renders it when
the site is built, so the page cannot drift from the commands.
"""

from __future__ import annotations

import inspect

import typer
from typer import _click as click

from workflows.spec.reference import escape


def _parameters(command: click.Command, context: click.Context) -> list[str]:
    """A table of the command's arguments and options, ``--help`` left out (every command has it)."""
    rows = []
    for parameter in command.get_params(context):
        record = parameter.get_help_record(context)
        if record is None or parameter.name == "help":
            continue
        names, text = record
        rows.append(f"| `{names}` | {escape(text) or '-'} |")
    if not rows:
        return []
    return ["| argument or option | what it does |", "|---|---|", *rows]


def _section(command: click.Command, context: click.Context) -> list[str]:
    usage = command.get_usage(context).removeprefix("Usage: ")
    lines = ["", f"## {context.command_path} {{ #{anchor(context.info_name or '')} }}", ""]
    lines += ["```text", usage, "```", ""]
    if command.help:
        lines += [escape(inspect.cleandoc(command.help), cell=False), ""]
    return lines + _parameters(command, context)


def anchor(command: str) -> str:
    """The id of a command's section: ``scale-timing`` -> ``cli-scale-timing``."""
    return f"cli-{command}" if command else "cli"


def render_cli(app: typer.Typer, *, prog: str = "deploybench") -> str:
    """Markdown for every command of the app: the global options, then one section per command."""
    group = typer.main.get_command(app)
    root = click.Context(group, info_name=prog, **group.context_settings)
    lines = _section(group, root)
    for name, command in getattr(group, "commands", {}).items():
        if not command.hidden:
            lines += _section(command, click.Context(command, info_name=name, parent=root))
    return "\n".join(lines).strip() + "\n"
