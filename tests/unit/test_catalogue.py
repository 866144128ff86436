"""The shipped failure catalogue: one entry per failure, each enforced, and docs generated from it."""

from __future__ import annotations

import inspect
from pathlib import Path

from typer.testing import CliRunner

from workflows import errors
from workflows.cli.app import app
from workflows.diagnosis.catalogue import linked, load_catalogue, render_markdown, resolve, static_checks
from workflows.diagnosis.rules import default_rules

DOCS = Path(__file__).resolve().parents[2] / "docs" / "failures.md"
runner = CliRunner()


def test_the_catalogue_has_every_entry_from_f01_to_f40() -> None:
    # Given the packaged catalogue
    ids = [e.id for e in load_catalogue().entries]
    # Then it holds F01..F40, each once
    assert sorted(ids) == [f"F{n:02d}" for n in range(1, 41)]


def test_every_entry_has_a_rule_and_every_rule_has_an_entry() -> None:
    # Given the entries joined with the runtime rules
    items = linked()
    entries = {item.entry.id: item.entry for item in items}
    # Then an entry is named by a runtime rule, or names the code that handles it (which exists)
    lacking = [i.entry.id for i in items if not i.rules and not i.entry.handled_by]
    assert lacking == []
    for item in items:
        if item.entry.handled_by:
            assert resolve(item.entry.handled_by) is not None
    # And every rule names an entry, under the entry's own name
    orphans = sorted(default_rules().ids() - set(entries))
    assert orphans == []
    renamed = [
        (r.id, r.name) for r in default_rules().rules if r.id in entries and r.name != entries[r.id].name
    ]
    assert renamed == []


def test_every_error_name_a_rule_mentions_exists_in_the_errors_module() -> None:
    # Given the error names the rules match on
    names = {
        c.error for r in default_rules().rules for c in (*r.signatures, *r.requires, *r.unless) if c.error
    }
    # And the classes of workflows/errors.py
    classes = {
        name
        for name, value in inspect.getmembers(errors, inspect.isclass)
        if value.__module__ == errors.__name__
    }
    # Then each is one of them, or a Step Functions / Lambda runtime error
    unknown = sorted(
        n for n in names if n not in classes and not n.startswith(("States.", "Sandbox.", "Lambda."))
    )
    assert unknown == []
    assert "CapacityStall" in names


def test_every_registered_preflight_check_prevents_an_entry_that_says_what_it_compares() -> None:
    # Given the preflight checks registered by every hosting mode
    checked = {entry_id for entry_id in static_checks() if entry_id.startswith("F")}
    entries = {item.entry.id: item.entry for item in linked()}
    # Then each catalogue ID a check covers is an entry whose static check is described
    assert sorted(checked - set(entries)) == []
    assert sorted(i for i in checked if entries[i].prevent is None) == []
    assert {"F04", "F14", "F19"} <= checked


def test_docs_failures_md_is_generated_from_the_catalogue_and_up_to_date() -> None:
    # Given the committed docs/failures.md
    committed = DOCS.read_text(encoding="utf-8")
    # When the catalogue is rendered again
    rendered = render_markdown()
    # Then they are the same (regenerate with: deploybench catalogue --write docs/failures.md)
    assert committed == rendered
    assert all(f"| {e.id} {e.name}" in rendered for e in load_catalogue().entries)


def test_catalogue_command_shows_one_entry_with_its_rule_check_and_remedy() -> None:
    # When one entry is asked for
    result = runner.invoke(app, ["catalogue", "f14"])
    # Then its fields are printed, the remediation branch and the rule's fix included
    assert result.exit_code == 0, result.output
    assert "F14 serverless-oom" in result.output
    for label in ("Signature:", "Cause:", "Static check:", "Runtime rule:", "Remedy: ⇒ `next_memory_size`"):
        assert label in result.output
    assert "serverless memory vs the model (serverless)" in result.output


def test_catalogue_command_lists_all_and_refuses_an_unknown_id() -> None:
    listing = runner.invoke(app, ["catalogue"])
    unknown = runner.invoke(app, ["catalogue", "F99"])
    assert listing.exit_code == 0
    assert all(f"F{n:02d}" in listing.output for n in (1, 6, 35))
    assert unknown.exit_code == 2
    assert "no catalogue entry 'F99'" in unknown.output and "F35" in unknown.output


def test_catalogue_write_produces_the_docs(tmp_path: Path) -> None:
    # When the catalogue is written to a new file
    target = tmp_path / "docs" / "failures.md"
    result = runner.invoke(app, ["catalogue", "--write", str(target)])
    # Then it is the same Markdown as the shipped docs
    assert result.exit_code == 0, result.output
    assert target.read_text(encoding="utf-8") == render_markdown()
