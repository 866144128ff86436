"""``deploybench catalogue [ID]``: the failure catalogue in the terminal, or written as docs/failures.md."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from workflows.cli.options import JsonOption
from workflows.cli.output import emit, fail, guarded, out, print_table

if TYPE_CHECKING:
    from workflows.diagnosis.catalogue import Linked


def _as_data(item: Linked) -> dict[str, Any]:
    from workflows.diagnosis.catalogue import fields

    return {
        "id": item.entry.id,
        "name": item.entry.name,
        "title": item.entry.title,
        **{label.lower().replace(" ", "_"): text for label, text in fields(item)},
        "rules": [rule.name for rule in item.rules],
        "actions": [action.value for action in item.actions],
    }


def entry_number(entry_id: str) -> tuple[int, str]:
    """``F06`` -> ``(6, 'F06')``: entries listed in numeric order, whatever order the file keeps."""
    digits = "".join(ch for ch in entry_id if ch.isdigit())
    return (int(digits) if digits else 10**6, entry_id)


@guarded
def catalogue(
    entry_id: Annotated[
        str | None, typer.Argument(metavar="[ID]", help="One entry, e.g. F06; all entries when left out.")
    ] = None,
    write: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="Write the catalogue as Markdown to this file (docs/failures.md)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Show the failure catalogue: signature, cause, static check, runtime rule and remedy of each entry."""
    from workflows.diagnosis.catalogue import linked, load_catalogue, render_entry, render_markdown

    if write is not None:
        if entry_id is not None:
            fail("--write writes the whole catalogue; leave out the ID")
        write.parent.mkdir(parents=True, exist_ok=True)
        write.write_text(render_markdown(), encoding="utf-8")
        count = len(load_catalogue().entries)
        emit(
            {"wrote": str(write), "entries": count},
            as_json=as_json,
            human=lambda: out.print(f"wrote {write} ({count} entries)"),
        )
        return
    items = sorted(linked(), key=lambda item: entry_number(item.entry.id))
    if entry_id is None:

        def table() -> None:
            shown = Table(title="Failure catalogue (deploybench catalogue ID for one entry)")
            for column in ("ID", "title", "phase", "remedy"):
                shown.add_column(column, overflow="fold")
            for item in items:
                branch = ", ".join(a.value for a in item.actions) or "advice"
                shown.add_row(item.entry.id, escape(item.entry.title), item.entry.phase, branch)
            print_table(shown)

        emit([_as_data(item) for item in items], as_json=as_json, human=table)
        return
    found = next((i for i in items if i.entry.id == entry_id.strip().upper()), None)
    if found is None:
        known = ", ".join(i.entry.id for i in items)
        fail(f"no catalogue entry {entry_id!r}", fix=f"give one of {known}")

    def entry() -> None:
        for label, text in render_entry(found):
            out.print(
                f"[bold]{label}[/]: {escape(text)}"
                if label[0] != "F"
                else f"[bold red]{label}[/] {escape(text)}"
            )

    emit(_as_data(found), as_json=as_json, human=entry)
