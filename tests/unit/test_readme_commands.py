"""The commands of the README and the docs pages, as written: every offline one runs, and its quoted
output has not drifted.

Each ``deploybench`` line of the code blocks of README.md and docs/**/*.md either runs here
(in-process, from the repository root, with its ``> FILE`` redirection) and must exit as the page
says, or is listed in ``NOT_RUN`` with the reason. A new command that is neither fails the test, as
does a quoted output (``$ deploybench ...`` in a text block) that no longer matches the CLI's.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scripts.quotes import QUOTED_SPECS, refresh
from workflows.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = [README] + [path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").rglob("*.md"))]
"""The README first, then every docs page: where a user reads a command."""
BLOCK = re.compile(r"```(bash|text)\n(.*?)```", re.S)

RUN = {
    "deploybench preflight examples/minilm-realtime.yaml": 0,
    "deploybench schema": 0,
    "deploybench definition deploy_pipeline": 0,
    "deploybench --version": 0,
    "deploybench input examples/minilm-realtime.yaml > input.json": 0,
    "deploybench input examples/sweep-nightly.yaml --sweep > sweep.json": 0,
    "deploybench definition deploy_pipeline > asl.json": 0,
    "deploybench schema > run-spec.schema.json": 0,
    **{
        f"deploybench preflight examples/minilm-{example}.yaml": 0
        for example in (
            "components",
            "lmi",
            "multi-container",
            "scale-to-zero",
            "serverless",
            "triton",
            "vllm",
        )
    },
}
"""Offline and fast: the line as written, and the exit code the page gives it."""

NOT_RUN = {
    "deploybench stop EXECUTION_ARN": "a synopsis; needs a running execution (tests/handlers/test_cli_aws.py -k stop)",
    "deploybench janitor --local": "reaps this machine's recorded groups (tests/unit/test_lifeline.py)",
    "deploybench run examples/minilm-realtime.yaml": "AWS: starts an execution of the deployed stack",
    "deploybench run SPEC --local": "a placeholder; `make run` runs it on the default (minutes: tests/e2e/test_e2e.py)",
    "deploybench run SPEC": "AWS, and a placeholder",
    "deploybench follow EXECUTION_ARN": "AWS, and a placeholder",
    "deploybench convert org/name": "a placeholder Hub id (tests/stack/test_hub_source.py converts one from a local Hub)",
    "deploybench definition deploybench-deploy-pipeline --resolve": "AWS: reads the deployed stack",
    "deploybench convert MODEL_DIR_OR_SPEC --out DIR [--task classification] [--precision int8] [--pack]": (
        "a synopsis (tests/models/test_convert_cli.py converts)"
    ),
    "deploybench convert sentence-transformers/all-MiniLM-L6-v2 --out minilm-onnx": "downloads from the Hub",
    "deploybench preflight SPEC [--artifact DIR_OR_TARBALL] [--json]": "a synopsis (the line above runs it)",
    "deploybench diagnose --log FILE [--mode serverless] [--json]": "a synopsis",
    "deploybench diagnose --log FILE --catalogue MINE.yaml": "a synopsis (tests/unit/test_diagnosis_user_catalogue.py runs it)",
    "deploybench catalogue [ID] [--write docs/failures.md]": "a synopsis (tests/unit/test_cli_contract.py lists it)",
    "deploybench diagnose --endpoint NAME [--since-min 60] [--json]": "AWS, a synopsis",
    "deploybench diagnose --traces NAME [--events FILE] [--cloudtrail NAME]": (
        "AWS, a synopsis (tests/handlers/test_diagnosis_traces.py, tests/unit/test_diagnosis_capacity_events.py)"
    ),
    "deploybench diagnose --log pasted.txt": "the pasted file is not on the page (tests/unit/test_diagnosis_paste.py)",
    "deploybench bench --endpoint NAME [--spec SPEC] [--batch-sizes 1,8] [--concurrency 1,4] ...": "AWS",
    "deploybench report RESULT.json [RESULT.json ...] [--out DIR]": "a synopsis (tests/handlers/test_reports.py)",
    "deploybench sweep examples/sweep-nightly.yaml": "AWS (with --local: minutes, tests/e2e/test_cli_sweep_local.py)",
    "deploybench janitor --dry-run": "AWS: lists the account's resources",
}
"""Why a command of the README or the docs does not run here."""


def readme_lines() -> list[tuple[str, str]]:
    """(block kind, command) of every ``deploybench`` line, comments dropped."""
    found = []
    for kind, body in (block for page in PAGES for block in BLOCK.findall(page)):
        for line in body.splitlines():
            line = line.strip().removeprefix("$ ")
            if line.startswith("deploybench "):
                found.append((kind, re.sub(r"\s+#.*$", "", line).strip()))
    return found


def quoted_outputs() -> list[tuple[str, str]]:
    """(command, the output the page prints under it) of each ``$ deploybench`` in a text block."""
    found = []
    for kind, body in (block for page in PAGES for block in BLOCK.findall(page)):
        if kind != "text":
            continue
        for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
            command, _, output = chunk.partition("\n")
            found.append((command.strip(), output.strip()))
    return found


def invoke(line: str, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    words = shlex.split(line)
    target = None
    if ">" in words:
        target = cwd / words[words.index(">") + 1]
        words = words[: words.index(">")]
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, words[1:])
    if target is not None:
        target.write_text(result.stdout, encoding="utf-8")
    return result.exit_code, result.stdout, result.stderr


def test_every_readme_command_is_run_here_or_says_why_not() -> None:
    commands = {command for _, command in readme_lines()}
    unaccounted = commands - set(RUN) - set(NOT_RUN) - {c for c, _ in quoted_outputs()}
    assert not unaccounted, (
        f"commands of the README or docs neither run nor listed in NOT_RUN: {sorted(unaccounted)}"
    )
    stale = (set(RUN) | set(NOT_RUN)) - commands
    assert not stale, f"listed but no longer in the README or docs: {sorted(stale)}"


@pytest.mark.parametrize("line", sorted(RUN))
def test_an_offline_readme_command_runs_as_written(
    line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, stdout, stderr = invoke(line, tmp_path, monkeypatch)
    assert code == RUN[line], stdout + stderr
    assert "Traceback" not in stderr
    if ">" in line:
        import json

        assert json.loads((tmp_path / line.split(">")[1].strip()).read_text(encoding="utf-8"))


@pytest.mark.parametrize(("command", "quoted"), quoted_outputs()[:3], ids=lambda v: v[:30])
def test_a_quoted_refusal_prints_what_the_readme_shows(
    command: str, quoted: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the spec file the quoted command names
    name = shlex.split(command)[2]
    (tmp_path / name).write_text(QUOTED_SPECS[name], encoding="utf-8")
    # When it runs as written, from the folder holding the spec
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, shlex.split(command)[1:])
    # Then it prints the quoted words, and exits as the exit-code table (docs/cli.md) says
    assert " ".join(result.stderr.split()) == " ".join(quoted.split())
    assert result.exit_code == (1 if quoted.startswith("PreflightBlocked") else 2)
    assert not (tmp_path / "deploybench-results").exists()


def test_the_quotes_are_what_the_cli_prints_now() -> None:
    # Given the README and the docs pages as committed
    # When their quoted outputs are produced again by the CLI (`make quotes`)
    # Then nothing changes: a version or count in a quote comes from the installed packages
    assert [refresh(page) == page for page in PAGES] == [True] * len(PAGES)


def test_the_set_up_puts_deploybench_in_the_venv_and_the_readme_says_how_to_reach_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["deploybench"] == "workflows.cli:main"
    assert ". .venv/bin/activate" in README and ".venv/bin/deploybench" in README
    # And the README keeps two set-up commands: one runs the main job, one the tests
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"```bash\n(.*?)\n```", quick, re.S) == ["make run", "make test"]


def test_the_python_range_is_the_one_the_readme_states() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["requires-python"] == ">=3.11,<3.14"
    assert "3.11, 3.12 or 3.13" in README
