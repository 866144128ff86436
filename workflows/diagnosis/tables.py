"""A pasted table's row, as Markdown and the CLI's pipes write it: its cells in order, trimmed."""

from __future__ import annotations


def pipe_cells(line: str) -> list[str]:
    """The cells of a row written between pipes ("| 14:00:00 | traffic stop | 1 |")."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]
