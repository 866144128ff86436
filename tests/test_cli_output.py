"""The command line's conventions, run as a user runs them: result on stdout, errors on stderr,
--json everywhere, the documented exit codes, help text without Python type names."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.main import get_command
from typer.testing import CliRunner

from tests.conftest import ROOT
from workflows.cli.app import app

runner = CliRunner()
EXAMPLE = ROOT / "examples" / "minilm-realtime.yaml"
TYPE_NAMES = re.compile(r"<(bool|str|int|float|path|list\[[^\]]*\])>|\{[a-z_]+\}")


def commands() -> list[str]:
    return sorted(get_command(app).commands)  # type: ignore[attr-defined]


def spec_with(tmp_path: Path, **hosting: object) -> Path:
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data["hosting"] = {k: v for k, v in data["hosting"].items() if k != "instance_type_fallbacks"} | hosting
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


# --- help and version ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", [None, *commands()])
def test_help_shows_no_python_type_names(name: str | None) -> None:
    # When a command's help is asked for
    result = runner.invoke(app, [name, "--help"] if name else ["--help"], terminal_width=200)
    # Then it shows metavars, never <bool>, <list[Path]> or {spec_path}
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.stdout
    assert not TYPE_NAMES.search(result.stdout), TYPE_NAMES.findall(result.stdout)


def test_every_aws_command_takes_region_profile_and_json() -> None:
    for name in (
        "run",
        "follow",
        "definition",
        "preflight",
        "diagnose",
        "bench",
        "sweep",
        "janitor",
        "convert",
        "scale-timing",
    ):
        text = runner.invoke(app, [name, "--help"], terminal_width=200).stdout
        assert {"--region", "--profile", "--json"} <= set(re.findall(r"--[a-z-]+", text)), name
    for name in commands():
        assert "--json" in runner.invoke(app, [name, "--help"], terminal_width=200).stdout, name


def test_version_comes_from_the_package_metadata() -> None:
    from importlib.metadata import version

    result = runner.invoke(app, ["--version"])
    assert (result.exit_code, result.stdout.strip()) == (0, f"deploybench {version('deploybench')}")


def test_default_output_folders_agree() -> None:
    # Every command that writes files writes under deploybench-results/ unless told otherwise
    for name in ("run", "sweep", "bench", "report", "convert", "scale-timing"):
        text = " ".join(runner.invoke(app, [name, "--help"], terminal_width=200).stdout.split())
        assert "deploybench-results" in text, name


# --- stdout is the result, stderr the error ---------------------------------------------------------


def test_definition_error_never_lands_in_the_redirected_file(tmp_path: Path) -> None:
    # When `definition foo > asl.json` is run in a shell
    target = tmp_path / "asl.json"
    with target.open("w") as stdout:
        completed = subprocess.run(
            [sys.executable, "-m", "workflows.cli", "definition", "foo"],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
    # Then the file stays empty, the error is one line on stderr, and it exits 2
    assert completed.returncode == 2
    assert target.read_text() == ""
    assert completed.stderr.strip().splitlines() == [completed.stderr.strip()]
    assert "unknown state machine 'foo'" in completed.stderr and "deploy_pipeline" in completed.stderr


def test_definition_takes_the_deployed_name() -> None:
    deployed = runner.invoke(app, ["definition", "deploybench-deploy-pipeline"])
    module = runner.invoke(app, ["definition", "deploy_pipeline"])
    assert deployed.exit_code == module.exit_code == 0
    assert deployed.stdout == module.stdout and json.loads(deployed.stdout)["StartAt"]


@pytest.mark.parametrize(
    "args",
    [
        ["preflight", "nope.yaml"],
        ["run", "nope.yaml"],
        ["report", "nope.json"],
        ["input", "nope.yaml"],
        ["sweep", "nope.yaml"],
        ["definition", "nope"],
        ["diagnose"],
    ],
)
def test_json_errors_are_one_object_on_stderr_with_exit_2(args: list[str]) -> None:
    # When a command fails on bad input with --json
    result = runner.invoke(app, [*args, "--json"])
    # Then stdout is empty and stderr holds one JSON error object carrying the exit code
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    error = json.loads(result.stderr)["error"]
    assert error["exit_code"] == 2 and error["message"] and error["type"]


def test_convert_json_error_names_the_problem(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = runner.invoke(app, ["convert", str(tmp_path / "empty"), "--out", str(tmp_path / "o"), "--json"])
    assert (result.exit_code, result.stdout) == (2, "")
    error = json.loads(result.stderr)["error"]
    assert error["type"] == "ModelSourceInvalid" and "config.json" in error["message"]


def test_convert_json_result(tiny_bert: Path, tmp_path: Path) -> None:
    out = tmp_path / "artifact"
    result = runner.invoke(
        app,
        ["convert", str(tiny_bert), "--out", str(out), "--optimize", "none", "--max-length", "32", "--json"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["artifact_dir"] == str(out) and data["manifest"]["onnx_file"] == "model.onnx"


def test_fault_plan_without_local_is_a_usage_error(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text("faults: []\n", encoding="utf-8")
    result = runner.invoke(app, ["run", str(EXAMPLE), "--fault-plan", str(plan)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert "--fault-plan applies to the local engine only" in result.stderr


# --- preflight ------------------------------------------------------------------------------------


def test_preflight_json_says_blocking_per_finding(tmp_path: Path) -> None:
    # Given a GPU multi-container spec (F04 blocks) with an unknown fallback type (a warning)
    spec = spec_with(
        tmp_path,
        mode="multi-container",
        instance_type_fallbacks=["ml.g5.xlarge", "ml.m5d.24xlarge"],
        models=[{"name": "second"}],
    )
    result = runner.invoke(app, ["preflight", str(spec), "--json"])
    # Then each finding says whether it blocks, the result says it blocked, and it exits 1
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    blocking = {f["id"]: f["blocking"] for f in report["findings"]}
    assert blocking["F04"] is True and blocking["instance-type"] is False
    assert report["blocked"] is True


def test_preflight_resolves_images_for_the_configured_region(monkeypatch: pytest.MonkeyPatch) -> None:
    triton = str(ROOT / "examples" / "minilm-triton.yaml")
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    # Then AWS_DEFAULT_REGION, AWS_REGION over it, and --region over both decide the region
    assert json.loads(runner.invoke(app, ["preflight", triton, "--json"]).stdout)["region"] == "eu-west-1"
    monkeypatch.setenv("AWS_REGION", "ap-southeast-2")
    assert (
        json.loads(runner.invoke(app, ["preflight", triton, "--json"]).stdout)["region"] == "ap-southeast-2"
    )
    flagged = runner.invoke(app, ["preflight", triton, "--json", "--region", "us-west-2"])
    assert json.loads(flagged.stdout)["region"] == "us-west-2"
    human = runner.invoke(app, ["preflight", triton, "--region", "eu-central-1"], terminal_width=200)
    assert "Region: eu-central-1" in human.stdout


def test_an_unknown_profile_is_one_line_exit_2(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    result = runner.invoke(app, ["preflight", str(EXAMPLE), "--profile", "nobody"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith("ProfileNotFound: ") and "nobody" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# --- instance_type_fallbacks ------------------------------------------------------------------------


def test_the_former_instance_types_name_is_accepted_with_a_warning(tmp_path: Path) -> None:
    spec = spec_with(tmp_path, instance_types=["ml.c6i.xlarge", "ml.c6i.2xlarge"])
    result = runner.invoke(app, ["input", str(spec)])
    # Then the input carries the new name, and stderr says to rename it
    assert result.exit_code == 0, result.output
    hosting = json.loads(result.stdout)["spec"]["hosting"]
    assert hosting["instance_type_fallbacks"] == ["ml.c6i.xlarge", "ml.c6i.2xlarge"]
    assert "instance_types" not in hosting
    assert "warning: hosting.instance_types is deprecated: rename it to hosting.instance_type_fallbacks" in (
        result.stderr
    )


def test_both_names_at_once_are_refused(tmp_path: Path) -> None:
    spec = spec_with(tmp_path, instance_types=["ml.c6i.xlarge"], instance_type_fallbacks=["ml.c6i.xlarge"])
    result = runner.invoke(app, ["preflight", str(spec)])
    assert result.exit_code == 2 and "keep only instance_type_fallbacks" in result.stderr


def test_the_schema_names_the_fallback_list() -> None:
    schema = runner.invoke(app, ["schema"]).stdout
    assert "instance_type_fallbacks" in schema and '"instance_types"' not in schema.split('"SweepSpec"')[0]


def test_the_examples_use_the_new_name() -> None:
    for path in (ROOT / "examples").glob("minilm-*.yaml"):
        hosting = yaml.safe_load(path.read_text(encoding="utf-8"))["hosting"]
        assert "instance_types" not in hosting, path.name


def test_diagnose_exits_3_when_no_entry_matches(tmp_path: Path) -> None:
    # Given a log no catalogue entry explains, and one that F01 explains
    unknown, known = tmp_path / "unknown.txt", tmp_path / "f01.txt"
    unknown.write_text("the coffee machine is empty\n", encoding="utf-8")
    known.write_text("ModuleNotFoundError: No module named 'onnxruntime'\n", encoding="utf-8")
    # Then the unexplained one exits 3 (with its diagnosis on stdout), the explained one 0
    undiagnosed = runner.invoke(app, ["diagnose", "--log", str(unknown), "--json"])
    assert undiagnosed.exit_code == 3 and json.loads(undiagnosed.stdout)["id"] == "unknown"
    diagnosed = runner.invoke(app, ["diagnose", "--log", str(known), "--json"])
    assert diagnosed.exit_code == 0 and json.loads(diagnosed.stdout)["id"] == "F01"
