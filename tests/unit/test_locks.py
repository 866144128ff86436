"""Every environment installs from a lock with hashes, and a lock that no longer matches its input is refused."""

from __future__ import annotations

import shutil
from importlib import metadata
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from scripts import locks
from workflows.cli.lockfile import PROJECT_LOCK, package_states, read_pins

ROOT = Path(__file__).resolve().parents[2]
# Installed by `make setup` beside the locks: the project itself, editable.
NOT_LOCKED = {"deploybench"}


@pytest.fixture
def copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of every lock and its input, which scripts/locks.py then reads instead of the repository's."""
    for lock in locks.LOCKS:
        for relative in (lock.source, lock.output):
            (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / relative, tmp_path / relative)
    monkeypatch.setattr(locks, "ROOT", tmp_path)
    return tmp_path


@pytest.mark.parametrize("lock", locks.LOCKS, ids=lambda lock: lock.name)
def test_each_lock_matches_its_input(lock: locks.Lock) -> None:
    # Given a lock as committed, Then it was made from its input as it is now
    assert locks.problems(lock) == []


@pytest.mark.parametrize("lock", locks.LOCKS, ids=lambda lock: lock.name)
def test_every_locked_package_is_pinned_with_its_hashes(lock: locks.Lock) -> None:
    # Given a lock's entries (a pin, then its hash lines)
    text = (ROOT / lock.output).read_text(encoding="utf-8")
    entries = [entry for entry in text.split("\n") if entry and not entry.startswith((" ", "#"))]
    # Then each pins one version and is followed by at least one sha256 (pip's --require-hashes needs both)
    assert entries and all("==" in entry and entry.endswith("\\") for entry in entries), entries
    assert text.count("--hash=sha256:") >= len(entries)


def test_a_pin_changed_in_pyproject_without_make_lock_is_named(copied: Path) -> None:
    # Given pyproject.toml asks for another boto3 than the lock holds
    pyproject = copied / "pyproject.toml"
    locked = read_pins((copied / "requirements.lock").read_text())["boto3"]
    pyproject.write_text(pyproject.read_text().replace(f'"boto3=={locked}"', '"boto3==1.44.99"'))
    # When the locks are checked, Then the pin, the lock's version and the fix are named
    [problem] = locks.problems(locks.PROJECT)
    assert f"asks for boto3==1.44.99, requirements.lock has boto3=={locked}" in problem
    assert "make lock" in problem
    assert locks.main(["check"]) == 1


def test_a_new_dependency_without_make_lock_is_named(copied: Path) -> None:
    # Given a dependency added to pyproject.toml and not locked
    pyproject = copied / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"pydantic==', '"cowsay==6.1",\n  "pydantic==', 1))
    # Then the check names it
    assert locks.problems(locks.PROJECT) == [
        "cowsay==6.1 is in pyproject.toml but not in requirements.lock: run `make lock` to regenerate "
        "requirements.lock from pyproject.toml"
    ]


def test_a_loosened_pin_the_lock_still_satisfies_is_still_a_changed_input(copied: Path) -> None:
    # Given a pin loosened to a range the locked version is in
    pyproject = copied / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"onnx==1.23.2"', '"onnx>=1.23"'))
    # Then the recorded input digest no longer matches: the lock must be made again
    assert locks.problems(locks.PROJECT) == [
        "pyproject.toml changed since requirements.lock was made: run `make lock` to regenerate "
        "requirements.lock from pyproject.toml"
    ]


def test_an_aws_environment_at_another_version_than_the_tested_one_is_named(copied: Path) -> None:
    # Given the Lambda bundle's lock holding a boto3 the project's lock (the tested one) does not
    functions = next(lock for lock in locks.LOCKS if lock.name == "functions")
    tested = read_pins((copied / "requirements.lock").read_text())["boto3"]
    path = copied / functions.output
    path.write_text(path.read_text().replace(f"boto3=={tested}", "boto3==1.44.0"))
    # Then the check names both versions
    assert (
        f"infra/requirements-functions.lock has boto3==1.44.0, the tested requirements.lock has {tested}"
        in locks.problems(functions)[0]
    )


def test_the_locks_take_the_cpu_torch_and_no_cuda_libraries() -> None:
    # Given every lock that holds torch
    for lock in locks.LOCKS:
        pins = read_pins((ROOT / lock.output).read_text())
        # Then torch is the CPU build and nothing pulls NVIDIA's CUDA wheels
        assert pins.get("torch", "2.13.0+cpu") == "2.13.0+cpu", lock.name
        assert not [name for name in pins if name.startswith("nvidia-")], lock.name


def test_this_environment_is_exactly_the_lock() -> None:
    # Given what `make setup` installed (pip freeze's view) and the project's locks
    installed = {canonicalize_name(d.metadata["Name"]): d.version for d in metadata.distributions()}
    locked = read_pins(PROJECT_LOCK.read_text()) | read_pins(
        (ROOT / "requirements-files-only.lock").read_text()
    )
    # Then every locked package is installed at its version, and nothing else is installed
    assert {n: (v, installed.get(n)) for n, v in locked.items() if installed.get(n) != v} == {}
    assert set(installed) - set(locked) == NOT_LOCKED
    # And the states doctor reports agree
    assert not [state for state in package_states() if state.drifted]


def pip_installs(text: str) -> list[str]:
    """Each `pip install` command of a Makefile or Dockerfile (continuation lines joined)."""
    joined = text.replace("\\\n", " ")
    return [line.split("pip install", 1)[1] for line in joined.splitlines() if "pip install" in line]


@pytest.mark.parametrize("path", ["Makefile", "infra/image/Dockerfile"])
def test_every_pip_install_takes_a_lock_with_hashes_or_installs_the_project_alone(path: str) -> None:
    # Given every pip install the project's builds run
    installs = pip_installs((ROOT / path).read_text(encoding="utf-8"))
    assert installs
    for command in installs:
        # Then each installs a lock in hash-checking mode, or only the project itself without dependencies
        words = command.split()
        locked = "--require-hashes" in words and any(w.endswith(".lock") for w in words)
        project_only = "--no-deps" in words and words[-2:] == ["-e", "."]
        assert locked or project_only, f"{path}: pip install{command}"


def test_the_lambda_bundle_installs_its_lock_in_hash_checking_mode() -> None:
    # Imported here: infra loads the CDK, seconds the other unit tests need not wait.
    import inspect

    from infra import bundling
    from infra.constants import FUNCTION_REQUIREMENTS

    # Given how the zip functions' dependencies are installed
    source = inspect.getsource(bundling.install_dependencies)
    # Then it is the functions' lock, with --require-hashes
    assert FUNCTION_REQUIREMENTS.name == "requirements-functions.lock"
    assert '"--require-hashes"' in source
