"""The one zip asset every zip function shares: the project's code plus its dependencies, built without Docker.

CDK calls ``FunctionBundler.try_bundle`` at synth (``BundlingOptions.local``); it copies the code
packages and installs ``infra/requirements-functions.lock`` (every version and its hashes, as the
tests ran them; ``make lock`` writes it) with pip for the Lambda platform (``--platform
manylinux2014_x86_64 --only-binary=:all: --python-version 3.11 --require-hashes``): wheels built for
the runtime, whatever machine synthesizes, so no Docker engine is needed.

When ``DEPLOYBENCH_TEST_SYNTH=1`` (tests only) the dependencies are not installed: the asset
holds the handler code and a ``DEPENDENCIES-NOT-INSTALLED`` marker, so tests synthesize offline.
``infra/app.py`` refuses to synthesize for deployment with that variable set.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import jsii
from aws_cdk import aws_lambda as lambda_

from infra.constants import (
    CODE_PACKAGES,
    FUNCTION_REQUIREMENTS,
    PLATFORM,
    PYTHON_VERSION,
    ROOT,
    TEST_SYNTH_ENV,
)

MARKER = "DEPENDENCIES-NOT-INSTALLED"
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".mypy_cache")


def test_synth() -> bool:
    return os.environ.get(TEST_SYNTH_ENV) == "1"


def copy_code(target: Path) -> None:
    """The code packages every handler imports (``lambdas``, ``workflows``, ...), without caches."""
    for package in CODE_PACKAGES:
        shutil.copytree(ROOT / package, target / package, ignore=_IGNORED, dirs_exist_ok=True)


def install_dependencies(target: Path, requirements: Path = FUNCTION_REQUIREMENTS) -> None:
    """pip-install the Lambda platform's wheels into ``target`` (the asset root is on sys.path in Lambda).

    Raises:
        RuntimeError: pip failed; its output says which requirement had no wheel for the platform.
    """
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-compile",
        "--target",
        str(target),
        "--platform",
        PLATFORM,
        "--implementation",
        "cp",
        "--python-version",
        PYTHON_VERSION,
        "--only-binary=:all:",
        "--require-hashes",
        "--requirement",
        str(requirements),
    ]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise RuntimeError(
            f"installing the function dependencies failed (pip exit {completed.returncode}):\n"
            f"{completed.stderr[-3000:]}\nEvery requirement in {requirements} needs a {PLATFORM} "
            f"cp{PYTHON_VERSION.replace('.', '')} wheel on the package index."
        )
    # Console scripts are of no use in Lambda and only add to the 250 MB unzipped limit.
    shutil.rmtree(target / "bin", ignore_errors=True)


@jsii.implements(cdk.ILocalBundling)
class FunctionBundler:
    """Local bundling in Python: CDK calls it instead of a Docker bundling image."""

    def __init__(self, *, with_dependencies: bool) -> None:
        self.with_dependencies = with_dependencies

    def try_bundle(self, output_dir: str, *, image: cdk.DockerImage, **options: Any) -> bool:
        target = Path(output_dir)
        copy_code(target)
        if self.with_dependencies:
            install_dependencies(target)
        else:
            (target / MARKER).write_text(
                f"Synthesized with {TEST_SYNTH_ENV}=1 for tests: dependencies were not installed.\n",
                encoding="utf-8",
            )
        # True: bundled here; CDK must never fall back to the Docker image.
        return True


def function_code() -> lambda_.Code:
    """The shared code asset (create it once; every zip function uses the same object)."""
    return lambda_.Code.from_asset(
        # The bundler reads the whole repository; the hash is of its output, so any change to the
        # code or the pinned requirements changes the asset.
        str(ROOT / "lambdas"),
        asset_hash_type=cdk.AssetHashType.OUTPUT,
        bundling=cdk.BundlingOptions(
            image=lambda_.Runtime.PYTHON_3_11.bundling_image,
            local=FunctionBundler(with_dependencies=not test_synth()),
        ),
    )
