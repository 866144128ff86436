"""Remediation of a failure the real serving stack produces by itself (never a fault plan): the
HF inference toolkit on Multi Model Server, which installs code/requirements.txt at start from
the offline wheelhouse. Skips, saying why, where that stack cannot run.

MMS takes 30-60 s of real time to answer its first call; the engine runs at 20x here so that
reads as minutes of Creating, inside wait.timeout_min.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fast_spec, serving_processes
from tests.support.local_pipeline import AFTER_IN_SERVICE, BEFORE_DEPLOY
from tests.support.remediation import EMPTY, WAIT_LOOP, collapse, run_to_the_end
from workflows.contracts import PipelineState

TIME_SCALE = 20.0
# A module the serving code imports that neither the DLC nor onnxruntime's dependencies install, and
# that the package index (the wheelhouse, offline) has: the artifact forgets it, as the field's
# forgot onnxruntime. onnxruntime itself cannot stand in: the preflight blocks it before deploy.
MISSING_MODULE = "dbprobe"


@pytest.fixture(scope="module")
def mms() -> Any:
    from workflows.container.environment import resolve_serving_stack

    chosen = resolve_serving_stack("auto")
    if chosen.kind != "mms":
        pytest.skip(f"the DLC's serving stack is not available here: {chosen.reason}")
    return chosen


def build_wheel(folder: Path, name: str, version: str = "1.0") -> Path:
    """A real pure-Python wheel installing module ``name`` (pip checks RECORD and metadata)."""
    files = {
        f"{name}/__init__.py": f'"""Installed from the wheelhouse."""\nVERSION = "{version}"\n',
        f"{name}-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{name}-{version}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = f"{name}-{version}.dist-info/RECORD"
    lines = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        lines.append(f"{path},sha256={digest},{len(text.encode())}")
    files[record] = "\n".join([*lines, f"{record},,"]) + "\n"
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


@pytest.fixture
def wheelhouse_with_the_module(mms: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The DLC's offline wheelhouse (linked, never modified: it is a shared cache) plus the module."""
    from workflows.container.environment import DlcEnvironment

    house = tmp_path / "wheelhouse"
    house.mkdir()
    for wheel in mms.environment.wheelhouse.iterdir():
        (house / wheel.name).symlink_to(wheel)
    build_wheel(house, MISSING_MODULE)
    monkeypatch.setattr(DlcEnvironment, "wheelhouse", property(lambda _self: house))
    return house


@pytest.fixture
def serving_code_needs_a_missing_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """The convert step writes serving code that also imports a module nothing installs."""
    from workflows.conversion import build as convert

    write = convert.write_serving_code

    def with_import(root: Path, plan: Any) -> None:
        write(root, plan)
        code = root / "code" / "inference.py"
        # Appended, not prepended: ``from __future__`` must stay the file's first statement.
        code.write_text(code.read_text(encoding="utf-8") + f"\nimport {MISSING_MODULE}\n", encoding="utf-8")

    monkeypatch.setattr(convert, "write_serving_code", with_import)
    # A patched converter is not one of the conversion cache's inputs: convert for real.
    monkeypatch.setenv("DEPLOYBENCH_CONVERSION_CACHE", "off")


def test_a_missing_module_is_added_repacked_and_redeployed(
    wheelhouse_with_the_module: Path,
    serving_code_needs_a_missing_module: None,
    tiny_bert: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from workflows.container.canary import CANARY_ENV
    from workflows.container.environment import SERVER_ENV

    monkeypatch.setenv(SERVER_ENV, "mms")
    # The pre-spend canary would stop this artifact at RunPreflight (F01, before any endpoint): this
    # test is of the deploy-time remediation loop, which an artifact reaches when no canary ran.
    monkeypatch.setenv(CANARY_ENV, "0")
    # Given serving code importing a module the container lacks (the preflight can only warn: it is
    # not one of the field's known modules)
    spec = fast_spec(tiny_bert, benchmark={"batch_sizes": [1], "sequence_lengths": [16]})
    state = PipelineState(run_id="rem-f01-1", spec=spec)
    # When the pipeline runs
    finished = run_to_the_end(state, tmp_path, time_scale=TIME_SCALE, log_of="db-rem-f01-1-a2")
    outcome, result = finished.outcome, finished.result
    # Then the endpoint passed its health check, every call failed with the missing module, and the
    # fix was to add the requirement, pack again and redeploy
    assert outcome.status == "SUCCEEDED", outcome.cause
    assert collapse(outcome.states) == [
        *BEFORE_DEPLOY,
        "DeployEndpoint",
        *WAIT_LOOP,
        "WarmUpShapes",
        "DiagnoseFailure",
        "PlanRemediation",
        "ChooseRemediation",
        "RemoveFailedAttemptBeforeRepack",
        "PackArtifact",
        "RunPreflight",
        "DeployEndpoint",
        *WAIT_LOOP,
        *AFTER_IN_SERVICE,
    ]
    [record] = result["attempt"]["history"]
    assert (record["diagnosis_id"], record["action"], record["error"]) == (
        "F01",
        "add_requirement",
        "WarmupFailed",
    )
    assert record["changes"] == [{"setting": "extra_requirements", "before": [], "after": [MISSING_MODULE]}]
    assert record["removed"][0] == "endpoint/db-rem-f01-1-a1"
    # And the configuration that served is the repacked artifact's, installed by the container
    assert result["hosting"]["extra_requirements"] == [MISSING_MODULE]
    assert any(f["id"] == "F01" and MISSING_MODULE in f["message"] for f in result["preflight"]["findings"])
    assert f"Successfully installed {MISSING_MODULE}" in finished.log
    assert all(s["errors"] == 0 for s in result["benchmark"]["shapes"])
    # And nothing is left
    assert finished.left == EMPTY
    assert finished.leaked == []
    assert serving_processes() == []
