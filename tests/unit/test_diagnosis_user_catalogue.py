"""User catalogues: entries and rules added in a user directory or with --catalogue, validated like the package's."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from workflows.cli.app import app
from workflows.diagnosis.user_catalogue import user_directory

runner = CliRunner()

USER_ENTRY = """
entries:
  - id: F90
    name: license-server
    section: endpoint
    title: the model's licence server refused the container
    phase: container start
    signature: "`LicenseCheckFailed: seat limit reached`"
    cause: The vendor's licence server counts each container as a seat.
    prevent: null
    remedy: Ask the vendor for more seats, or run fewer containers.
rules:
  - id: F90
    name: license-server
    title: the licence server refused the container
    action: fail
    fix: Ask the vendor for more seats (the licence counts each container).
    signatures:
      - {pattern: "LicenseCheckFailed: seat limit reached", confidence: 0.9}
"""
LOG = (
    "2026-11-02T10:00:01,000 [ERROR] W-9000-model-stdout LicenseCheckFailed: seat limit reached (12 of 12)\n"
)


def _diagnose(tmp_path: Path, *args: str) -> tuple[int, str]:
    log = tmp_path / "pasted.txt"
    if not log.exists():
        log.write_text(LOG, encoding="utf-8")
    config = tmp_path / "config"
    result = runner.invoke(
        app, ["diagnose", "--log", str(log), *args], env={"XDG_CONFIG_HOME": str(config), "COLUMNS": "200"}
    )
    return result.exit_code, result.output


def test_an_entry_in_the_user_directory_names_the_failure(tmp_path: Path) -> None:
    # Given an entry and its rule in $XDG_CONFIG_HOME/deploybench/catalogue.d/
    directory = tmp_path / "config" / "deploybench" / "catalogue.d"
    directory.mkdir(parents=True)
    (directory / "licence.yaml").write_text(USER_ENTRY, encoding="utf-8")
    # When a log showing it is diagnosed
    code, output = _diagnose(tmp_path, "--json")
    # Then the user's entry is named, with its fix
    assert code == 0, output
    diagnosis = json.loads(output)
    assert (diagnosis["id"], diagnosis["action"]) == ("F90", "fail")
    assert "more seats" in diagnosis["fix"]


def test_catalogue_file_adds_entries_and_signatures_to_packaged_entries(tmp_path: Path) -> None:
    # Given a file passed with --catalogue that adds a signature to the packaged F06
    extra = tmp_path / "mine.yaml"
    extra.write_text(
        USER_ENTRY
        + """
  - id: F06
    name: capacity-stall
    title: our proxy's words for no capacity
    action: next_instance_type
    fix: Retry on the next instance type.
    signatures:
      - {pattern: "capacity-proxy: pool empty", confidence: 0.9}
""",
        encoding="utf-8",
    )
    (tmp_path / "stall.txt").write_text("capacity-proxy: pool empty for ml.g5.xlarge\n", encoding="utf-8")
    # When each log is diagnosed with it
    code, output = _diagnose(tmp_path, "--json", "--catalogue", str(extra))
    stall = runner.invoke(
        app,
        ["diagnose", "--log", str(tmp_path / "stall.txt"), "--json", "--catalogue", str(extra)],
        env={"XDG_CONFIG_HOME": str(tmp_path / "config")},
    )
    # Then the new entry and the packaged one are named from the user's signatures
    assert (code, json.loads(output)["id"]) == (0, "F90")
    assert (stall.exit_code, json.loads(stall.output)["action"]) == (0, "next_instance_type")
    # And without the file the same log is unknown
    assert _diagnose(tmp_path)[0] == 3


def test_an_invalid_user_catalogue_is_refused_naming_the_file_and_the_field(tmp_path: Path) -> None:
    # Given files that break the schema: an unknown action, a packaged ID reused, a rule without entry
    bad_action = tmp_path / "action.yaml"
    bad_action.write_text(USER_ENTRY.replace("action: fail", "action: reboot"), encoding="utf-8")
    reused = tmp_path / "reused.yaml"
    reused.write_text(USER_ENTRY.replace("F90", "F06"), encoding="utf-8")
    orphan = tmp_path / "orphan.yaml"
    orphan.write_text(
        USER_ENTRY.split("rules:")[0].replace("F90", "F91")
        + "rules:"
        + USER_ENTRY.split("rules:")[1].replace("F90", "F92"),
        encoding="utf-8",
    )
    not_a_catalogue = tmp_path / "list.yaml"
    not_a_catalogue.write_text("- just\n- a list\n", encoding="utf-8")
    # When each is passed with --catalogue
    results = {
        p.stem: _diagnose(tmp_path, "--catalogue", str(p))
        for p in (bad_action, reused, orphan, not_a_catalogue)
    }
    # Then each exits 2 with one line naming the file and what is wrong
    assert {name: code for name, (code, _) in results.items()} == dict.fromkeys(results, 2)
    assert "action.yaml is invalid: rules.0.action" in " ".join(results["action"][1].split())
    assert "entry F06 is already defined by the packaged catalogue" in " ".join(results["reused"][1].split())
    assert "names F92, which no entry defines" in " ".join(results["orphan"][1].split())
    assert "holds no `entries:` or `rules:`" in " ".join(results["list"][1].split())
    assert "Traceback" not in "".join(output for _, output in results.values())


def test_unknown_points_to_the_user_catalogue_not_into_the_package(tmp_path: Path) -> None:
    # Given evidence no entry matches
    (tmp_path / "pasted.txt").write_text("everything is fine, nothing to see\nstill fine\n", encoding="utf-8")
    # When it is diagnosed
    code, output = _diagnose(tmp_path, "--json")
    # Then the fix tells where a user's own entry goes
    fix = json.loads(output)["fix"]
    assert code == 3
    assert "deploybench/catalogue.d/" in fix and "--catalogue FILE" in fix
    assert "workflows/data/catalogue.yaml" not in fix


def test_the_user_directory_follows_xdg_config_home_and_defaults_to_dot_config() -> None:
    # Given an environment with and without XDG_CONFIG_HOME (a relative one is ignored, as the spec says)
    # Then the directory is under it, else under ~/.config
    assert user_directory({"XDG_CONFIG_HOME": "/srv/conf", "HOME": "/home/u"}) == Path(
        "/srv/conf/deploybench/catalogue.d"
    )
    assert user_directory({"HOME": "/home/u"}) == Path("/home/u/.config/deploybench/catalogue.d")
    assert user_directory({"XDG_CONFIG_HOME": "rel", "HOME": "/home/u"}) == Path(
        "/home/u/.config/deploybench/catalogue.d"
    )
