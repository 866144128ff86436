"""The docs site: generated references rendered from the code, every page in the nav, a short README."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Annotated, Literal

import pytest
import typer
import yaml
from mkdocs.exceptions import PluginError
from pydantic import BaseModel, Field

from workflows.cli.app import app
from workflows.cli.help import PlainGroup
from workflows.cli.reference import render_cli
from workflows.spec.pipeline import RunSpec
from workflows.spec.reference import anchor, render_schema

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def hooks() -> ModuleType:
    """docs/hooks/reference.py, loaded as mkdocs loads it (by path)."""
    spec = importlib.util.spec_from_file_location("reference_hook", DOCS / "hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def section(text: str, heading: str) -> str:
    """The Markdown from a heading line to the next heading of the same level."""
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else None]


def test_the_cli_reference_has_every_command_with_each_of_its_options() -> None:
    # Given the app's commands
    group = typer.main.get_command(app)
    assert isinstance(group, PlainGroup)
    # When the reference is rendered
    text = render_cli(app)
    # Then each command has a section, in which each of its options and arguments is a row
    for name, command in group.commands.items():
        body = section(text, f"## deploybench {name} ")
        for parameter in command.params:
            if parameter.name != "help":
                shown = parameter.opts[0] if parameter.opts[0].startswith("-") else parameter.metavar
                assert f"| `{shown}" in body, f"{name}: {shown}"
    assert "deploybench preflight [OPTIONS] SPEC" in text


def test_a_command_shows_its_usage_help_and_parameters_in_the_words_of_its_help() -> None:
    # Given an app with one command: an argument with a metavar, an option with a default
    small = typer.Typer(cls=PlainGroup, context_settings={"help_option_names": ["-h", "--help"]})

    @small.command()
    def wait(
        target: Annotated[str, typer.Argument(metavar="ARN", help="What to wait for.")],
        seconds: Annotated[float, typer.Option(metavar="SECONDS", help="Writes to DIR/<run id>/.")] = 5.0,
    ) -> None:
        """Wait for ARN, polling every SECONDS."""

    @small.command()
    def other() -> None:
        """Another command, so that the group keeps its subcommands."""

    # When it is rendered
    text = render_cli(small, prog="tool")
    body = section(text, "## tool wait ")
    # Then the usage, the help and each parameter are there, Markdown-safe
    assert "tool wait [OPTIONS] ARN" in body
    assert "Wait for ARN, polling every SECONDS." in body
    assert "| `ARN` | What to wait for. [required] |" in body
    assert "| `--seconds SECONDS` | Writes to DIR/&lt;run id&gt;/. [default: 5.0] |" in body
    assert "--help" not in body


def test_the_spec_reference_has_every_field_of_every_definition_the_run_spec_reaches() -> None:
    # Given the run spec's JSON Schema
    schema = RunSpec.model_json_schema()
    # When it is rendered
    text = render_schema(schema, prefix="spec")
    # Then every definition has its section, and each section a row per field
    for name, definition in schema["$defs"].items():
        body = text[text.index(f"{{ #{anchor('spec', name)} }}") :].split("\n### ", 1)[0]
        for field in definition.get("properties", {}):
            assert f"| `{field}` |" in body, f"{name}.{field}"
    assert "| `hosting` | one of [RealtimeHosting](#spec-realtimehosting)" in text
    assert "Under `hosting.vpc`, `benchmark.job_vpc`." in text


class _Inner(BaseModel):
    """One item."""

    size: int = Field(1, ge=1, le=64, description="How many <units>.")


class _Outer(BaseModel):
    """The root."""

    name: str = Field(min_length=1, max_length=24, description="A name | a label.")
    concurrency: int | None = Field(None, ge=1, le=200, description="Empty: on demand.")
    kind: Literal["a", "b"] = "a"
    items: list[_Inner] = Field(default_factory=list, description="The items.")


def test_a_field_shows_its_type_default_bounds_and_description() -> None:
    # When a small schema is rendered
    text = render_schema(_Outer.model_json_schema(), prefix="x")
    # Then each row says what the parser accepts
    assert (
        "| `name` | string | required | at least 1 character(s), at most 24 characters | A name \\| a label. |"
        in text
    )
    assert "| `concurrency` | integer or empty | `null` | ≥ 1, ≤ 200 | Empty: on demand. |" in text
    assert '| `kind` | one of `"a"`, `"b"` | `"a"` |' in text
    assert "| `items` | list of [_Inner](#x-_inner) |" in text
    # And a definition reached through a list is its own section, under the field's path
    assert "### _Inner { #x-_inner }" in text and "Under `items`." in text
    assert "How many &lt;units&gt;." in text


def test_the_hook_fills_each_marker_and_fails_a_page_that_lost_one() -> None:
    hook = hooks()
    # When the CLI page and a plain page are expanded
    filled = hook.expand("cli.md", "# CLI\n\n<!-- reference:cli -->\n")
    plain = hook.expand("index.md", "# Home\n")
    # Then the reference replaced the marker, and the plain page is untouched
    assert "## deploybench run " in filled and "reference:cli" not in filled
    assert plain == "# Home\n"
    # And a page that lost its marker stops the build
    with pytest.raises(PluginError, match="reference:sweep"):
        hook.expand("spec.md", "<!-- reference:spec -->\n")


def test_every_page_is_in_the_nav_and_the_readme_maps_every_section() -> None:
    # Given the nav and the pages
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = set(re.findall(r"[\w/-]+\.md", str(config["nav"])))
    pages = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}
    # Then the nav lists every page, and nothing that is not one
    assert listed == pages
    # And the README links every page but the site's home, and each link resolves
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(docs/([\w/-]+\.md)\)", readme))
    assert linked == pages - {"index.md"}


def test_the_readme_is_the_front_door() -> None:
    # Given the README
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    # Then it is short and holds what a newcomer needs first, the rest being in docs/
    assert len(readme.splitlines()) <= 250
    headings = re.findall(r"^## (.+)$", readme, re.M)
    assert headings == ["Quick start", "What you see", "AWS quick start", "Documentation"]
