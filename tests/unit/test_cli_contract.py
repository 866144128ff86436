"""One error contract and one help for every command: the JSON error object, -h, the shared options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from state_machines import error_names
from workflows import errors
from workflows.cli.app import app

GROUP = get_command(app)
COMMANDS = sorted(GROUP.commands)  # type: ignore[attr-defined]

# For each command, a line that fails offline and fast, before any AWS call (an unknown profile fails
# while the session is built). Every command gets an unknown flag too (test_a_usage_error_...).
FORCED = {
    "bench": ["bench", "--endpoint", "x", "--profile", "nosuch"],
    "catalogue": ["catalogue", "F99"],
    "convert": ["convert", "/nonexistent/model"],
    "definition": ["definition", "nope"],
    "diagnose": ["diagnose"],
    "doctor": ["doctor", "--aws", "--profile", "nosuch"],
    "follow": ["follow", "not-an-arn"],
    "images": ["images", "--region", "xx-nowhere-1"],
    "input": ["input", "/nonexistent.yaml"],
    "janitor": ["janitor", "--dry-run", "--profile", "nosuch"],
    "preflight": ["preflight", "/nonexistent.yaml"],
    "report": ["report", "/nonexistent.json"],
    "run": ["run", "/nonexistent.yaml"],
    "scale-timing": ["scale-timing", "--endpoint", "e", "--component", "c", "--profile", "nosuch"],
    "schema": ["schema", "--sweep", "--kind", "x"],
    "stop": ["stop", "not-an-arn"],
    "sweep": ["sweep", "/nonexistent.yaml"],
}


@pytest.fixture(autouse=True)
def no_aws_setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty AWS configuration: no profile, no credentials, no instance metadata to ask."""
    empty = tmp_path / "aws-config"
    empty.write_text("", encoding="utf-8")
    for name in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.setenv(name, str(empty))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)


def error_object(stderr: str) -> dict[str, object]:
    body = json.loads(stderr.strip().splitlines()[-1])
    assert set(body) == {"error"}
    error = body["error"]
    assert set(error) == {"type", "message", "fix", "exit_code"}
    return dict(error)


def test_every_error_class_has_a_fix_of_its_own() -> None:
    # Given every class of workflows/errors.py
    for cls in errors.all_errors():
        # Then each states its own fix (not its parent's), one that names something to do
        fix = cls.__dict__.get("default_fix")
        assert isinstance(fix, str) and len(fix) > 20, cls.__name__
        assert "e.g. ." not in fix and not fix.endswith(" ."), cls.__name__
        assert errors.fix_for(cls.__name__) == fix


def test_the_forced_failures_cover_every_command() -> None:
    assert sorted(FORCED) == COMMANDS


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_with_json_and_a_forced_failure_prints_one_error_object(command: str) -> None:
    # When the command fails with --json
    result = CliRunner().invoke(app, [*FORCED[command], "--json"])
    # Then stderr ends with the error object: a class name, a message, a fix, the exit code it exits with
    assert result.exit_code in (1, 2), result.output
    error = error_object(result.stderr)
    assert error["exit_code"] == result.exit_code
    assert error["type"] in error_names.error_names(), error
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["fix"], str) and len(error["fix"]) > 10
    # And stdout carries nothing but a result (here: none)
    assert result.stdout.strip() == ""


@pytest.mark.parametrize("command", COMMANDS)
def test_a_usage_error_under_json_is_the_same_error_object(command: str) -> None:
    result = CliRunner().invoke(app, [command, "--no-such-flag", "--json"])
    assert result.exit_code == 2
    error = error_object(result.stderr)
    assert error == {
        "type": "UsageError",
        "message": "No such option: --no-such-flag",
        "fix": error["fix"],
        "exit_code": 2,
    }
    assert f"{command} -h" in str(error["fix"])


@pytest.mark.parametrize("command", COMMANDS)
def test_dash_h_is_help_on_every_command(command: str) -> None:
    result = CliRunner().invoke(app, [command, "-h"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.stdout and "--help" in result.stdout and "-h" in result.stdout


def test_human_errors_print_the_json_text_with_brackets_intact() -> None:
    # Given a failure whose fix lists values in brackets
    result = CliRunner().invoke(app, ["definition", "nope"])
    as_json = error_object(CliRunner().invoke(app, ["definition", "nope", "--json"]).stderr)
    # Then the human line is the JSON object's words: type, message, "Fix:", fix
    line = " ".join(result.stderr.split())
    assert line == f"{as_json['type']}: {as_json['message']} Fix: {as_json['fix']}"


def test_rich_markup_in_an_error_survives_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    from workflows.cli.output import print_error

    print_error(
        "hosting.instance_type_fallbacks: 'ml.c6i.xlargee' is refused.",
        code=2,
        fix="pick one of [ml.c6i.xlarge, ml.c6i.2xlarge]",
        kind="SpecInvalid",
        as_json=False,
    )
    assert "[ml.c6i.xlarge, ml.c6i.2xlarge]" in " ".join(capsys.readouterr().err.split())


def _shared(name: str) -> dict[str, tuple[str | None, str | None, tuple[str, ...]]]:
    found = {}
    for command_name, command in GROUP.commands.items():  # type: ignore[attr-defined]
        for param in command.params:
            if param.name == name:
                found[command_name] = (param.metavar, getattr(param, "help", None), tuple(param.opts))
    return found


@pytest.mark.parametrize(
    ("name", "at_least"),
    [("region", 8), ("profile", 8), ("as_json", 14), ("stack_name", 2)],
)
def test_a_shared_option_reads_the_same_on_every_command(name: str, at_least: int) -> None:
    # Given every command that takes the option
    found = _shared(name)
    assert len(found) >= at_least, sorted(found)
    # Then its flag, metavar and help are one definition's
    assert len(set(found.values())) == 1, found


def test_region_reads_region_and_names_aws_region_first() -> None:
    ((metavar, help_text, opts),) = set(_shared("region").values())
    assert metavar == "REGION" and opts == ("--region",)
    assert help_text is not None and help_text.index("AWS_REGION") < help_text.index("AWS_DEFAULT_REGION")
    assert set(_shared("region")) >= {"images", "doctor", "run", "janitor"}
    assert set(_shared("profile")) >= {"images", "doctor", "run", "janitor"}


def test_diagnose_mode_refuses_an_unknown_mode_naming_the_modes() -> None:
    result = CliRunner().invoke(app, ["diagnose", "--log", "-", "--mode", "bogus", "--json"], input="x")
    error = error_object(result.stderr)
    assert result.exit_code == 2 and error["type"] == "UsageError"
    assert "'bogus' is not one of" in str(error["message"]) and "'serverless'" in str(error["message"])


def test_images_reads_aws_region_and_prints_uris_whole_when_piped(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given AWS_REGION and no --region, stdout not a terminal
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    result = CliRunner().invoke(app, ["images"])
    assert result.exit_code == 0, result.output
    # Then the region is AWS_REGION's, and every URI sits whole on one line
    assert "Images deployed in eu-west-1" in result.stdout
    found = json.loads(CliRunner().invoke(app, ["images", "--json"]).stdout)
    uri = found["modes"]["realtime"]["cpu"]["default"]
    assert ".eu-west-1." in uri and any(uri in line for line in result.stdout.splitlines())


def test_catalogue_lists_entries_in_numeric_order() -> None:
    listed = [e["id"] for e in json.loads(CliRunner().invoke(app, ["catalogue", "--json"]).stdout)]
    assert listed == sorted(listed, key=lambda i: int(i[1:])) and len(listed) > 30


def test_schema_sweep_prints_the_sweep_files_schema() -> None:
    found = json.loads(CliRunner().invoke(app, ["schema", "--sweep"]).stdout)
    assert found["title"] == "SweepSpec" and "matrix" in found["properties"]
    run = json.loads(CliRunner().invoke(app, ["schema"]).stdout)
    assert run["title"] == "RunSpec"
    # And the run spec's schema names the Hub forms of model.source
    source = run["$defs"]["ModelSpec"]["properties"]["source"]["description"]
    assert "hf://org/name" in source and "org/name[@revision]" in source


def test_convert_help_names_the_hub_forms() -> None:
    text = " ".join(CliRunner().invoke(app, ["convert", "-h"]).stdout.split())
    assert "hf://org/name" in text.replace("│ ", "") or "hf://org/name" in text


@pytest.mark.parametrize(
    ("data", "line"),
    [
        ({"hosting": {"mode": "serverles"}}, "hosting.mode: 'serverles' is not one of"),
        ({"hosting": {"mode": "serverless", "memory_size_mb": 1500}}, "hosting.memory_size_mb: 1500 MB"),
        ({"model": {"pooling": "maen"}}, "model.pooling: 'maen' is not one of auto, mean"),
        ({"convert": {"optimize": "fuse"}}, "convert.optimize: 'fuse' is not one of"),
        ({"hosting": {"instance_type_fallbacks": ["ml.c6i.xlarg"]}}, "hosting.instance_type_fallbacks[0]:"),
        ({"wait": {"poll_initial_s": 300, "poll_max_s": 60}}, "(got poll_initial_s: 300, poll_max_s: 60)"),
        ({"benchmark": {"batch_size": [1]}}, "benchmark.batch_size: unknown field"),
    ],
)
def test_each_kind_of_spec_error_reads_in_yaml_terms_with_a_fix(data: dict[str, object], line: str) -> None:
    # Given a spec with one error of each kind spec_errors.explain words (closed sets, bounds, unknown
    # fields, checks across fields)
    from workflows.errors import SpecInvalid
    from workflows.spec.pipeline import parse_spec

    with pytest.raises(SpecInvalid) as refused:
        parse_spec({"name": "x", **data}, origin="spec")
    text = refused.value.message
    # Then its line has the YAML path and a fix; a closed set's has a did-you-mean
    assert line in text, text
    fix = text.split("Fix: ", 1)[1]
    assert fix.strip() and "e.g. ." not in fix
    if "is not one of" in text or "not accepted by SageMaker" in text or "unknown field" in text:
        assert "did you mean '" in text, text
    assert "'name': 'x'" not in text
