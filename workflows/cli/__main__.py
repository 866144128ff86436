"""``python -m workflows.cli``."""

from __future__ import annotations

from workflows.cli import main

main()
