"""The DLC-like serving environment of local endpoints, built on first use and cached.

The Hugging Face inference DLC serves ``code/inference.py`` with sagemaker-huggingface-inference-toolkit
on Multi Model Server (a Java frontend with Python workers). Local endpoints run that same stack in a
separate virtual environment per image: the image's transformers exactly (read from the image
table, ``dlc_versions``; one environment per version, so a spec selecting an older image is served by
that image's transformers and tokenizers) and ``setuptools<81`` (the model server module imports
``pkg_resources``, which later setuptools no longer ship). torch must be there too: the toolkit's handler calls ``get_device()`` on every load
and answers 400 "At least one of TensorFlow 2.0 or PyTorch should be installed" without it.
onnxruntime is deliberately *not* in the base, as in the DLC, so a ``code/requirements.txt`` that
forgets it fails for real (F01); an offline wheelhouse next to the environment holds what
requirements files may ask for.

Where Java is missing or the build fails, local endpoints fall back to the light server
(``sagemaker/light_server.py``), which loads the same handler path and answers with the same error
texts; :func:`resolve_serving_stack` says which one runs and why.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Literal

from workflows.container.versions import TOOLKIT, ImageLibraries, libraries_for_image

BASE_REQUIREMENTS = (
    f"sagemaker-huggingface-inference-toolkit=={TOOLKIT}",
    "multi-model-server==1.1.11",
    "setuptools<81",
)
CACHE_ENV = "DEPLOYBENCH_CACHE_DIR"
SERVER_ENV = "DEPLOYBENCH_LOCAL_SERVER"
READY = "READY.json"
BUILD_TIMEOUT_S = 1800

Announce = Callable[[str], None]
ServerKind = Literal["mms", "light"]


class DlcUnavailable(Exception):
    """The DLC-like environment cannot be used here; the message says why and what to do."""


def announce_to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def cache_root() -> Path:
    """``$DEPLOYBENCH_CACHE_DIR`` or ``~/.cache/deploybench``."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "deploybench").expanduser()


def _installed(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        raise DlcUnavailable(f"{package} is not installed in this environment; run `make setup`.") from None


def base_requirements(libraries: ImageLibraries | None = None) -> list[str]:
    """torch as the main environment's exact build (the same CPU wheel; the image's torch cannot be had
    here), the image's transformers exactly (its tokenizers follows), the toolkit and its server."""
    image = libraries or libraries_for_image(None)
    transformers = f"transformers[sentencepiece,sklearn]=={image.local_transformers()}"
    return [f"torch=={_installed('torch')}", transformers, *BASE_REQUIREMENTS]


def wheelhouse_requirements() -> list[str]:
    """What code/requirements.txt may install offline: the onnxruntime the artifact pins (F01), and the
    openvino a ``convert.engine: openvino`` artifact pins beside it (PyPI serves both to the DLC)."""
    return [f"onnxruntime=={_installed('onnxruntime')}", f"openvino=={_installed('openvino')}"]


@dataclass(frozen=True)
class DlcEnvironment:
    """A built environment: its interpreter, its ``bin`` (multi-model-server is found on PATH) and wheelhouse."""

    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def wheelhouse(self) -> Path:
        return self.root / "wheelhouse"

    @property
    def versions(self) -> dict[str, str]:
        data = json.loads((self.root / READY).read_text(encoding="utf-8"))
        return dict(data.get("versions", {}))


def environment_key(libraries: ImageLibraries | None = None) -> str:
    recipe = {
        "python": list(sys.version_info[:2]),
        "base": base_requirements(libraries),
        "wheelhouse": wheelhouse_requirements(),
    }
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:12]


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """An flock held across processes (and across threads: each holds its own open file)."""
    with lock_path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(command: list[str], log: Path, env: dict[str, str]) -> None:
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n$ {' '.join(command)}\n")
        out.flush()
        completed = subprocess.run(
            command, stdout=out, stderr=subprocess.STDOUT, timeout=BUILD_TIMEOUT_S, check=False, env=env
        )
    if completed.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-12:]
        raise DlcUnavailable(
            f"`{' '.join(command[:6])} ...` exited with {completed.returncode} (log: {log}):\n"
            + "\n".join(tail)
        )


_PROBE = """
import importlib.metadata as m, json, importlib.util as u
names = ["sagemaker-huggingface-inference-toolkit", "sagemaker-inference", "multi-model-server",
         "transformers", "tokenizers", "torch", "numpy", "setuptools"]
print(json.dumps({"versions": {n: m.version(n) for n in names},
                  "onnxruntime_in_base": u.find_spec("onnxruntime") is not None}))
"""


def _build(root: Path, log: Path, libraries: ImageLibraries) -> None:
    """Build in place (a venv is not relocatable: console-script shebangs hold absolute paths); the
    READY marker, written last with an atomic rename, is what makes the folder usable."""
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    _run([sys.executable, "-m", "venv", str(root)], log, env)
    python = str(root / "bin" / "python")
    pip = [python, "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "install", "--quiet", *base_requirements(libraries)], log, env)
    freeze = root / "base-freeze.txt"
    with freeze.open("w", encoding="utf-8") as out:
        subprocess.run([*pip, "freeze"], stdout=out, check=True, env=env, timeout=120)
    requirements = root / "wheelhouse-requirements.txt"
    requirements.write_text("\n".join(wheelhouse_requirements()) + "\n", encoding="utf-8")
    # Constrained by the base: unconstrained, pip fetches numpy 2.x, which would shadow the base's 1.26
    # (pyctcdecode holds numpy<2) once installed with --target.
    _run(
        [*pip, "download", "--quiet", "-d", str(root / "wheelhouse"), "-r", str(requirements)]
        + ["-c", str(freeze)],
        log,
        env,
    )
    probe = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, env=env, timeout=300)
    if probe.returncode != 0:
        raise DlcUnavailable(f"the built environment does not import the toolkit:\n{probe.stderr[-2000:]}")
    facts = json.loads(probe.stdout)
    if facts["onnxruntime_in_base"]:
        raise DlcUnavailable("onnxruntime ended up in the base environment; F01 could not be reproduced.")
    partial = root / (READY + ".partial")
    partial.write_text(
        json.dumps({"versions": facts["versions"], "key": root.name, "image": libraries.as_dict()}, indent=1),
        encoding="utf-8",
    )
    os.replace(partial, root / READY)


def ensure_dlc_environment(
    libraries: ImageLibraries | None = None, *, announce: Announce = announce_to_stderr
) -> DlcEnvironment:
    """The cached environment of an image's libraries (default: the table's default build), built first
    if needed (about 2 minutes, 1.7 GB; once per machine and transformers version).

    Concurrent callers wait on one lock; a build that died half-way (no READY marker) is wiped and
    redone.

    Raises:
        DlcUnavailable: the build failed (its log is named in the message).
    """
    libraries = libraries or libraries_for_image(None)
    root = cache_root() / f"dlc-{environment_key(libraries)}"
    environment = DlcEnvironment(root)
    if (root / READY).is_file():
        return environment
    root.parent.mkdir(parents=True, exist_ok=True)
    log = root.parent / f"{root.name}.build.log"
    with _exclusive(root.parent / f"{root.name}.lock"):
        if (root / READY).is_file():
            return environment
        announce(
            f"Building the DLC-like serving environment of {libraries.source} (transformers "
            f"{libraries.local_transformers()}) for local endpoints in {root} "
            "(first use only: about 2 minutes and 1.7 GB; later runs reuse it) ..."
        )
        shutil.rmtree(root, ignore_errors=True)
        log.write_text("", encoding="utf-8")
        try:
            _build(root, log, libraries)
        except (OSError, subprocess.SubprocessError, DlcUnavailable) as error:
            shutil.rmtree(root, ignore_errors=True)
            raise DlcUnavailable(f"building {root} failed: {error}") from error
        announce(f"DLC-like serving environment ready ({root}).")
    return environment


DEVICE_PACKAGES = ("onnxruntime-gpu",)
"""Builds an artifact pins for its device that the base wheelhouse does not hold (a GPU artifact's
onnxruntime-gpu, at whatever version it pins): fetched from the index into the wheelhouse on first
need, so every requirement the artifact pins installs offline, as on the image."""


def device_pins(requirements: str) -> list[str]:
    """The ``package==version`` lines of ``requirements`` naming a device build (``DEVICE_PACKAGES``)."""
    pins = []
    for line in requirements.splitlines():
        text = line.split("#", 1)[0].strip().replace(" ", "")
        name, _, pinned = text.partition("==")
        if pinned and name.lower().replace("_", "-") in DEVICE_PACKAGES:
            pins.append(f"{name}=={pinned}")
    return pins


def _has_wheel(wheelhouse: Path, pin: str) -> bool:
    name, _, pinned = pin.partition("==")
    stem = name.lower().replace("-", "_")
    return any(wheelhouse.glob(f"{stem}-{pinned}-*.whl"))


def ensure_device_wheels(
    environment: DlcEnvironment, requirements: str, *, announce: Announce = announce_to_stderr
) -> list[str]:
    """Put the device builds ``requirements`` pins into the environment's wheelhouse (downloaded once,
    constrained by the base like the rest of the wheelhouse); returns the pins added.

    Raises:
        DlcUnavailable: the index has no such build, or cannot be reached (the pip log is in the message).
    """
    missing = [pin for pin in device_pins(requirements) if not _has_wheel(environment.wheelhouse, pin)]
    if not missing:
        return []
    root = environment.root
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    with _exclusive(root.parent / f"{root.name}.lock"):
        missing = [pin for pin in missing if not _has_wheel(environment.wheelhouse, pin)]
        if not missing:
            return []
        announce(
            f"Adding {', '.join(missing)} to the wheelhouse of {root} (the artifact's device build; "
            "first use only) ..."
        )
        pip = [str(environment.python), "-m", "pip", "--disable-pip-version-check"]
        _run(
            [*pip, "download", "--quiet", "-d", str(environment.wheelhouse), *missing]
            + ["-c", str(root / "base-freeze.txt")],
            root.parent / f"{root.name}.device-wheels.log",
            env,
        )
    return missing


def java_version() -> str | None:
    """``openjdk version "17.0.15"`` style first line of ``java -version``, or None without Java."""
    java = shutil.which("java")
    if java is None:
        return None
    try:
        completed = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = (completed.stderr or completed.stdout).strip().splitlines()
    return lines[0] if completed.returncode == 0 and lines else None


@dataclass(frozen=True)
class ServingStack:
    """Which model server local endpoints run, and why."""

    kind: ServerKind
    environment: DlcEnvironment | None = None
    java: str | None = None
    reason: str = ""
    libraries: ImageLibraries | None = None

    def describe(self) -> str:
        if self.kind == "mms" and self.environment is not None:
            v = self.environment.versions
            return (
                f"Multi Model Server {v.get('multi-model-server', '?')} with sagemaker-huggingface-inference-toolkit "
                f"{v.get('sagemaker-huggingface-inference-toolkit', '?')} (transformers {v.get('transformers', '?')}, "
                f"tokenizers {v.get('tokenizers', '?')}, torch {v.get('torch', '?')}) on {self.java}, the HF "
                f"inference DLC's stack" + (f" as in {self.libraries.source}" if self.libraries else "")
            )
        return f"light server (stand-in for the DLC's Multi Model Server): {self.reason}"


_resolved: dict[tuple[str, str], ServingStack] = {}
_resolve_lock = threading.Lock()


def resolve_serving_stack(
    preference: str | None = None, *, image: str | None = None, announce: Announce = announce_to_stderr
) -> ServingStack:
    """Pick the model server for local endpoints (once per process, preference and image libraries).

    ``image``: the container's image URI; its libraries (``dlc_versions.libraries_for_image``) choose
    the environment, so a spec selecting an older image is served by that image's transformers.

    ``preference`` (or ``$DEPLOYBENCH_LOCAL_SERVER``): ``auto`` (default: MMS where Java and the DLC-like
    environment are available, else the light server, saying why), ``mms`` (required) or ``light``.

    Raises:
        DlcUnavailable: ``mms`` was required and cannot run here.
    """
    choice = (preference or os.environ.get(SERVER_ENV) or "auto").lower()
    if choice not in {"auto", "mms", "light"}:
        raise DlcUnavailable(f"{SERVER_ENV}={choice!r} is not a server choice; use auto, mms or light.")
    libraries = libraries_for_image(image)
    key = (choice, libraries.local_transformers())
    with _resolve_lock:
        if key in _resolved:
            return _resolved[key]
        stack = _resolve(choice, announce, libraries)
        _resolved[key] = stack
        return stack


def _resolve(choice: str, announce: Announce, libraries: ImageLibraries) -> ServingStack:
    if choice == "light":
        return ServingStack("light", reason=f"chosen with {SERVER_ENV}=light")
    java = java_version()
    try:
        if java is None:
            raise DlcUnavailable("Java was not found (Multi Model Server's frontend needs a JRE 8+ on PATH)")
        return ServingStack(
            "mms", ensure_dlc_environment(libraries, announce=announce), java=java, libraries=libraries
        )
    except DlcUnavailable as error:
        if choice == "mms":
            raise
        stack = ServingStack("light", java=java, reason=str(error).splitlines()[0], libraries=libraries)
        announce(f"Local endpoints fall back to the {stack.describe()}")
        return stack
