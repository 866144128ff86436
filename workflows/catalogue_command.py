"""``deploybench catalogue [ID]``: the failure catalogue in the terminal, or written as docs/failures.md."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

console = Console(highlight=False, soft_wrap=True)


def catalogue(
    entry_id: Annotated[
        str | None, typer.Argument(metavar="[ID]", help="One entry, e.g. F06; all entries when left out.")
    ] = None,
    write: Annotated[
        Path | None, typer.Option(help="Write the catalogue as Markdown to this file (docs/failures.md).")
    ] = None,
) -> None:
    """Show the failure catalogue: signature, cause, static check, runtime rule and remedy of each entry."""
    from workflows.catalogue import linked, load_catalogue, render_entry, render_markdown

    if write is not None:
        if entry_id is not None:
            console.print("[bold red]error[/]: --write writes the whole catalogue; leave out the ID")
            raise typer.Exit(2)
        write.parent.mkdir(parents=True, exist_ok=True)
        write.write_text(render_markdown(), encoding="utf-8")
        console.print(f"wrote {write} ({len(load_catalogue().entries)} entries)")
        return
    items = linked()
    if entry_id is None:
        table = Table(title="Failure catalogue (deploybench catalogue ID for one entry)")
        for column in ("ID", "title", "phase", "remedy"):
            table.add_column(column, overflow="fold")
        for item in items:
            branch = ", ".join(a.value for a in item.actions) or "advice"
            table.add_row(item.entry.id, item.entry.title, item.entry.phase, branch)
        console.print(table)
        return
    found = next((i for i in items if i.entry.id == entry_id.strip().upper()), None)
    if found is None:
        known = ", ".join(i.entry.id for i in items)
        console.print(f"[bold red]error[/]: no catalogue entry {entry_id!r}; entries are {known}")
        raise typer.Exit(2)
    for label, text in render_entry(found):
        console.print(f"[bold]{label}[/]: {text}" if label[0] != "F" else f"[bold red]{label}[/] {text}")
    sys.stdout.flush()
