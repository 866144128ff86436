"""Help text in the words of the command line, not of Python.

Typer labels every parameter with its annotation (``<bool>`` on a flag that takes no value,
``<list[Path]>``, ``{spec_path}`` in the usage line). Here a flag shows nothing, an option shows its
metavar (``REGION``, ``DIR``; by default its type in capitals, as click writes it: ``PATH``,
``INTEGER``) and an argument shows its metavar (by default its name in capitals), ``SPEC`` or
``[SPEC]`` in the usage line as POSIX usage does. Every command of the app gets this through
``PlainGroup``: commands register as usual.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from typer import _click as click
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption
from typer.exceptions import Abort

_WORDS = {
    "str": "TEXT",
    "int": "INTEGER",
    "float": "NUMBER",
    "path": "PATH",
    "file": "PATH",
    "directory": "DIR",
}


def _type_word(label: str | None) -> str:
    """``<str>`` -> ``TEXT``, ``<path>`` -> ``PATH``, ``<a|b>`` stays a choice: ``a|b``."""
    bare = (label or "").strip("<>").removeprefix("list[").removesuffix("]")
    if "|" in bare:
        return bare
    return _WORDS.get(bare.lower(), "VALUE")


class PlainArgument(TyperArgument):
    """An argument named by its metavar only."""

    def _plain_name(self) -> str:
        return self.metavar or (self.name or "value").upper()

    @property
    def display_name_raw(self) -> str:
        return self._plain_name()

    def display_type_rich(self, ctx: click.Context) -> str | None:
        return None

    def _rich_display_name(self) -> str:
        return self._plain_name() + ("..." if self.nargs != 1 else "")

    def _usage_display_name(self) -> str:
        name = self._plain_name() + ("..." if self.nargs != 1 else "")
        return name if self.required else f"[{name}]"


class PlainOption(TyperOption):
    """A flag shows no type; an option shows its metavar."""

    def display_type_rich(self, ctx: click.Context) -> str | None:
        if self.is_flag or self.count:
            return None
        return self.metavar or _type_word(super().display_type_rich(ctx))


def plain(param: click.Parameter) -> click.Parameter:
    """The same parameter, shown the plain way (a flag's ``--help`` included)."""
    if isinstance(param, TyperArgument) and not isinstance(param, PlainArgument):
        param.__class__ = PlainArgument
    elif isinstance(param, TyperOption) and not isinstance(param, PlainOption):
        param.__class__ = PlainOption
    return param


class PlainCommand(TyperCommand):
    """A command whose help shows metavars, not annotations."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        return [plain(param) for param in super().get_params(ctx)]


class PlainGroup(TyperGroup):
    """The app's group: every command it holds gets ``PlainCommand``'s help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for command in self.commands.values():
            if type(command) is TyperCommand:
                command.__class__ = PlainCommand

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        return [plain(param) for param in super().get_params(ctx)]

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        """As click's, but with ``--json`` anywhere on the line a usage error (an unknown flag, a
        refused choice, a missing argument) is the same JSON error object as every other failure."""
        argv = list(sys.argv[1:] if args is None else args)
        if not standalone_mode or "--json" not in argv:
            return super().main(argv, prog_name, complete_var, standalone_mode, windows_expand_args, **extra)
        from workflows.cli.output import print_error
        from workflows.errors import UsageError

        try:
            code = super().main(argv, prog_name, complete_var, False, windows_expand_args, **extra)
        except click.ClickException as error:
            context = getattr(error, "ctx", None)
            where = context.command_path if context is not None else "deploybench"
            print_error(
                error.format_message(),
                code=error.exit_code,
                fix=f"see `{where} -h` for what it takes",
                kind=UsageError.__name__,
                as_json=True,
            )
            sys.exit(error.exit_code)
        except Abort:
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)
