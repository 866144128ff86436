"""``deploybench doctor`` reads this environment against the lock CI tested and names what differs."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from workflows.cli.app import app
from workflows.cli.doctor import environment_checks
from workflows.cli.lockfile import KEY_PACKAGES, PROJECT_LOCK, installed_version, read_pins


def test_doctor_offline_shows_the_versions_that_matter_as_locked() -> None:
    # Given this environment, installed from the lock by `make setup`
    # When doctor runs without --aws, as JSON
    result = CliRunner().invoke(app, ["doctor", "--json"])
    # Then each key package is shown at its installed version, matching the lock, and it exits 0
    checks = {c["subject"]: c for c in json.loads(result.stdout)}
    assert result.exit_code == 0, result.stdout
    locked = read_pins(PROJECT_LOCK.read_text())
    for name in ("boto3", "botocore", "onnxruntime", "transformers", "tokenizers", "moto"):
        assert checks[name]["status"] == "ok"
        assert checks[name]["detail"] == f"{locked[name]}, as locked"


def test_a_package_at_another_version_than_the_lock_is_named_with_the_fix(tmp_path: Path) -> None:
    # Given a lock whose botocore and numpy differ from what is installed
    text = PROJECT_LOCK.read_text()
    for name in ("botocore", "numpy"):
        text = text.replace(f"\n{name}=={installed_version(name)} ", f"\n{name}==0.0.1 ")
    lock = tmp_path / "requirements.lock"
    lock.write_text(text)
    # When the environment is checked against it
    checks = {c.subject: c for c in environment_checks(lock)}
    # Then both are failures naming the installed and the locked version and how to fix it
    assert checks["botocore"].status == "fail"
    assert checks["botocore"].detail == (
        f"{installed_version('botocore')}, the lock has 0.0.1: run `make setup` (it installs requirements.lock exactly)"
    )
    assert checks["numpy"].status == "fail"
    assert "locked packages" not in checks
    assert checks["boto3"].status == "ok"


def test_without_a_lock_the_versions_are_shown_unverified(tmp_path: Path) -> None:
    # Given an installation with no lock beside it
    checks = environment_checks(tmp_path / "requirements.lock")
    # Then every key package is listed with its version, unverified, saying why
    assert [c.subject for c in checks] == list(KEY_PACKAGES)
    assert {c.status for c in checks} == {"unverified"}
    assert checks[0].detail.startswith(f"{installed_version('boto3')}; no requirements.lock")
