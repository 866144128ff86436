"""Network isolation: preflight refuses an isolated artifact that would need a package index (F37), and
the local SageMaker gives an isolated container no index to reach."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from workflows.artifact.vendoring import container_python, vendor_wheels
from workflows.container.environment import DlcEnvironment, ServingStack
from workflows.errors import ArtifactIncomplete
from workflows.hosting.modes import strategies
from workflows.local.sagemaker.container_spec import ContainerSpec
from workflows.local.sagemaker.launch import UNREACHABLE, command_and_environment
from workflows.preflight.isolation import check_isolation, installs_offline, wheel_distributions

PINNED = "onnxruntime==1.22.0\n"
OFFLINE = "--no-index\n--find-links wheels\nonnxruntime==1.22.0\n"
WHEEL = "onnxruntime-1.22.0-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"


def test_an_isolated_artifact_that_would_pip_install_from_an_index_is_blocked_as_f37() -> None:
    # Given an isolated spec whose requirements.txt installs from an index, with no wheels
    # When checked
    [finding] = check_isolation(isolated=True, requirements=PINNED, wheels=[])
    # Then it is blocking F37, naming the package without a wheel, the missing options and the fix
    assert (finding.id, finding.severity) == ("F37", "blocking")
    assert "['onnxruntime']" in finding.message and "--no-index" in finding.message
    assert "hosting.network_isolation" in finding.fix


def test_vendored_wheels_with_offline_options_pass_and_a_missing_wheel_does_not() -> None:
    # Given the requirements made offline, with and without the wheel
    # Then only the artifact that carries a wheel for every requirement passes
    assert check_isolation(isolated=True, requirements=OFFLINE, wheels=[WHEEL]) == []
    [finding] = check_isolation(isolated=True, requirements=OFFLINE + "tokenizers==0.21.0\n", wheels=[WHEEL])
    assert "tokenizers" in finding.message and "--no-index" not in finding.message
    # And a spec that is not isolated is never refused for it
    assert check_isolation(isolated=False, requirements=PINNED, wheels=[]) == []


def test_wheel_names_and_options_are_read_as_pip_reads_them() -> None:
    assert wheel_distributions([WHEEL, "Sentence_Piece-0.2.0-py3-none-any.whl", "notes.txt"]) == {
        "onnxruntime",
        "sentence-piece",
    }
    assert installs_offline("--no-index\n-f wheels\n") and not installs_offline("--find-links wheels\n")


def test_the_check_is_declared_by_every_hosting_mode() -> None:
    # Given every hosting mode, Then each declares the F37 check among its own
    for mode, strategy in strategies().items():
        assert any(check.ids == ("F37",) for check in strategy.checks), mode


def spec(*, isolated: bool, tmp_path: Path) -> ContainerSpec:
    return ContainerSpec(
        endpoint="e",
        variant="primary",
        hostname="primary",
        environment={},
        log_path=tmp_path / "log",
        isolated=isolated,
    )


def test_an_isolated_local_container_gets_no_wheelhouse_and_an_unreachable_proxy(tmp_path: Path) -> None:
    # Given the MMS stack (a DLC environment; its interpreter is not started here)
    stack = ServingStack(kind="mms", environment=DlcEnvironment(tmp_path / "dlc"))
    arguments = {
        "model_dir": tmp_path / "ml" / "model",
        "workdir": tmp_path / "w",
        "tmp": tmp_path,
        "port": 8080,
    }
    # When the environments of an isolated and an ordinary container are built
    _, isolated = command_and_environment(stack, spec=spec(isolated=True, tmp_path=tmp_path), **arguments)
    _, ordinary = command_and_environment(stack, spec=spec(isolated=False, tmp_path=tmp_path), **arguments)
    # Then the ordinary one installs from the wheelhouse, the isolated one from no index and through no proxy
    assert ordinary["PIP_FIND_LINKS"] == str(tmp_path / "dlc" / "wheelhouse")
    assert "PIP_FIND_LINKS" not in isolated and isolated["PIP_NO_INDEX"] == "1"
    assert isolated["HTTPS_PROXY"] == isolated["PIP_PROXY"] == UNREACHABLE


def test_pip_in_that_environment_cannot_reach_an_index(tmp_path: Path) -> None:
    # Given the isolated container's pip settings
    stack = ServingStack(kind="mms", environment=DlcEnvironment(tmp_path / "dlc"))
    _, env = command_and_environment(
        stack,
        spec=spec(isolated=True, tmp_path=tmp_path),
        model_dir=tmp_path / "ml" / "model",
        workdir=tmp_path / "w",
        tmp=tmp_path,
        port=8080,
    )
    # When pip fetches a package that exists on PyPI, even when told to use PyPI's index and no cache
    env.pop("PIP_NO_INDEX")
    env.update({"PIP_INDEX_URL": "https://pypi.org/simple", "PIP_NO_CACHE_DIR": "1"})
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--retries", "0", "--timeout", "3"]
    done = subprocess.run(
        [*command, "-d", str(tmp_path / "fetched"), "six==1.16.0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # Then nothing is fetched: no package index is reachable
    assert done.returncode != 0
    assert "No matching distribution found for six==1.16.0" in done.stderr
    assert not (tmp_path / "fetched").exists() or not any((tmp_path / "fetched").iterdir())


def make_wheel(folder: Path, name: str, version: str) -> Path:
    """A minimal pure-Python wheel (a module and its dist-info), as a package index would serve it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr(f"{name}.py", "VALUE = 1\n")
        wheel.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        wheel.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        wheel.writestr(f"{info}/RECORD", "")
    return path


def test_pack_vendors_the_wheels_and_the_artifact_then_installs_offline(tmp_path: Path) -> None:
    # Given an artifact whose requirements name a package, and a folder that serves its wheel
    make_wheel(tmp_path / "index", "isoprobe", "1.0")
    artifact = tmp_path / "artifact"
    (artifact / "code").mkdir(parents=True)
    (artifact / "code" / "requirements.txt").write_text("isoprobe==1.0\n", encoding="utf-8")
    # When pack vendors them for the container's Python
    vendored = vendor_wheels(artifact, python_version="3.12", find_links=(tmp_path / "index",))
    # Then the wheel is in code/wheels/, the requirements install offline, and preflight lets it through
    requirements = (artifact / "code" / "requirements.txt").read_text(encoding="utf-8")
    assert vendored == ["isoprobe-1.0-py3-none-any.whl"]
    assert check_isolation(isolated=True, requirements=requirements, wheels=vendored) == []
    # And pip, with no index reachable, installs from the artifact alone
    target = tmp_path / "installed"
    done = offline_install(artifact / "code" / "requirements.txt", target, tmp_path)
    assert done.returncode == 0, done.stderr
    assert (target / "isoprobe.py").is_file()


def offline_install(requirements: Path, target: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """pip install -r, with no configuration, no cache and no reachable index."""
    return subprocess.run(
        [sys.executable, "-m", "pip", "install", "--target", str(target), "-r", str(requirements)],
        env={
            "PATH": "/usr/bin:/bin",
            "PIP_CONFIG_FILE": "/dev/null",
            "HTTPS_PROXY": UNREACHABLE,
            "PIP_NO_CACHE_DIR": "1",
        },
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_the_vendored_requirements_are_a_lock_and_a_changed_wheel_does_not_install(tmp_path: Path) -> None:
    # Given an artifact whose requirement is a range, vendored from a folder that serves one release
    wheel = make_wheel(tmp_path / "index", "isoprobe", "1.2")
    artifact = tmp_path / "artifact"
    (artifact / "code").mkdir(parents=True)
    (artifact / "code" / "requirements.txt").write_text("isoprobe>=1.0\n", encoding="utf-8")
    vendor_wheels(artifact, python_version="3.12", find_links=(tmp_path / "index",))
    # Then the requirements pin the vendored release with its file's sha256, and keep the asked line as a comment
    requirements = (artifact / "code" / "requirements.txt").read_text(encoding="utf-8")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert f"isoprobe==1.2 --hash=sha256:{digest}" in requirements.splitlines()
    assert "#   isoprobe>=1.0" in requirements.splitlines()
    # When the vendored wheel is swapped for another build of the same release
    vendored = artifact / "code" / "wheels" / wheel.name
    with zipfile.ZipFile(vendored, "a") as changed:
        changed.writestr("extra.py", "CHANGED = True\n")
    done = offline_install(artifact / "code" / "requirements.txt", tmp_path / "installed", tmp_path)
    # Then pip, in hash-checking mode, refuses it
    assert done.returncode != 0
    assert "THESE PACKAGES DO NOT MATCH THE HASHES" in done.stderr


def test_a_repack_vendors_afresh_from_its_own_lock_and_a_line_added_since(tmp_path: Path) -> None:
    # Given an artifact vendored once, to which a remediation then adds a requirement
    make_wheel(tmp_path / "index", "isoprobe", "1.0")
    make_wheel(tmp_path / "index", "isoextra", "2.0")
    artifact = tmp_path / "artifact"
    (artifact / "code").mkdir(parents=True)
    (artifact / "code" / "requirements.txt").write_text("isoprobe==1.0\n", encoding="utf-8")
    vendor_wheels(artifact, python_version="3.12", find_links=(tmp_path / "index",))
    with (artifact / "code" / "requirements.txt").open("a", encoding="utf-8") as requirements:
        requirements.write("isoextra==2.0\n")
    # When pack vendors again
    vendored = vendor_wheels(artifact, python_version="3.12", find_links=(tmp_path / "index",))
    # Then both are vendored and locked, once each, and the artifact installs offline
    assert vendored == ["isoextra-2.0-py3-none-any.whl", "isoprobe-1.0-py3-none-any.whl"]
    pinned = [
        line for line in (artifact / "code" / "requirements.txt").read_text().splitlines() if "--hash" in line
    ]
    assert [line.split(" ")[0] for line in pinned] == ["isoextra==2.0", "isoprobe==1.0"]
    done = offline_install(artifact / "code" / "requirements.txt", tmp_path / "installed", tmp_path)
    assert done.returncode == 0, done.stderr


def test_a_requirement_without_a_wheel_for_the_container_stops_pack(tmp_path: Path) -> None:
    # Given a requirement that no wheel folder serves
    artifact = tmp_path / "artifact"
    (artifact / "code").mkdir(parents=True)
    (artifact / "code" / "requirements.txt").write_text("isoprobe-missing==2.0\n", encoding="utf-8")
    (tmp_path / "index").mkdir()
    # When pack vendors, Then it stops naming the Python, the platform and the fix
    with pytest.raises(ArtifactIncomplete, match="Python 3.12 on manylinux2014_x86_64") as stopped:
        vendor_wheels(artifact, python_version="3.12", find_links=(tmp_path / "index",))
    assert "network_isolation" in str(stopped.value)


def test_the_wheels_are_for_the_python_of_the_container_image() -> None:
    # Given the HF DLC tags (CPU and GPU), Then the Python is read from the tag; an untagged image gets the default
    assert (
        container_python("huggingface-pytorch-inference:2.6.0-transformers5.5.3-cpu-py312-ubuntu22.04")
        == "3.12"
    )
    assert (
        container_python("huggingface-pytorch-inference:2.1.0-transformers4.37.0-gpu-py310-cu118-ubuntu20.04")
        == "3.10"
    )
    assert container_python("my-registry/my-image:latest") == "3.12"
