"""mkdocs hook: the generated reference pages are rendered from the code each time the site is built.

A page holds a marker line (``<!-- reference:cli -->``) where its reference goes; the build fails when a
page that should hold one lacks it, so a reference cannot silently vanish. The failure catalogue is
the exception: ``docs/failures.md`` is written by ``deploybench catalogue --write`` and a test keeps it
current, so it reads the same on GitHub as on the site.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mkdocs.exceptions import PluginError


def cli_reference() -> str:
    from workflows.cli.app import app
    from workflows.cli.reference import render_cli

    return render_cli(app)


def spec_reference() -> str:
    from workflows.spec.pipeline import RunSpec
    from workflows.spec.reference import render_schema

    return render_schema(RunSpec.model_json_schema(), prefix="spec")


def sweep_reference() -> str:
    from workflows.spec.reference import render_schema
    from workflows.sweeps.spec import SweepSpec

    return render_schema(SweepSpec.model_json_schema(), prefix="sweep")


REFERENCES: dict[str, dict[str, Callable[[], str]]] = {
    "cli.md": {"<!-- reference:cli -->": cli_reference},
    "spec.md": {"<!-- reference:spec -->": spec_reference, "<!-- reference:sweep -->": sweep_reference},
}
"""Page (relative to docs/) -> its marker lines and what renders each."""


def expand(page: str, markdown: str) -> str:
    """The page's Markdown with each of its markers replaced by the reference it names.

    Raises:
        PluginError: a page listed in REFERENCES lacks one of its markers.
    """
    for marker, render in REFERENCES.get(page, {}).items():
        if marker not in markdown:
            raise PluginError(f"docs/{page} lacks the line {marker}: the generated reference goes there")
        markdown = markdown.replace(marker, render())
    return markdown


def on_page_markdown(markdown: str, *, page: Any, config: Any, files: Any) -> str:
    return expand(page.file.src_uri, markdown)
