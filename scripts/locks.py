"""Every environment the project builds installs from a lock with hashes; this writes and checks them.

    python scripts/locks.py compile [NAME ...]   # `make lock`: regenerate the locks from their inputs
    python scripts/locks.py check                # `make check`: each lock still matches its input

A lock is pip-compile's output (``--generate-hashes``), installed with ``pip install --require-hashes``.
Each records the sha256 of its input, so an input changed without ``make lock`` is refused by
``check``, with the requirement that no longer matches. The AWS environments (the Lambda zip
bundle, the container image) take their versions from the project's lock, the one the tests run,
except what their input pins itself (numpy for the Lambda runtime's glibc). Packages installed with
``--no-deps`` (their files only) are locked by downloading each and hashing it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workflows.cli.lockfile import read_pins  # noqa: E402

DIGEST_PREFIX = "# input-sha256: "


@dataclass(frozen=True)
class Lock:
    """One environment: its input, its lock, and how the lock is made."""

    name: str
    source: str
    output: str
    # "resolved": pip-compile with dependencies; "files-only": installed with --no-deps, each file hashed.
    kind: str = "resolved"
    # Versions from the project's lock, except those the input pins with ==.
    constrained: bool = False
    extra: str | None = None

    @property
    def source_path(self) -> Path:
        return ROOT / self.source

    @property
    def output_path(self) -> Path:
        return ROOT / self.output


PROJECT = Lock("project", "pyproject.toml", "requirements.lock", extra="dev")
LOCKS = (
    PROJECT,
    Lock(
        "project-files-only", "requirements-files-only.in", "requirements-files-only.lock", kind="files-only"
    ),
    Lock(
        "functions", "infra/requirements-functions.in", "infra/requirements-functions.lock", constrained=True
    ),
    Lock("image", "infra/image/requirements.in", "infra/image/requirements.lock", constrained=True),
    Lock(
        "image-files-only",
        "infra/image/requirements-files-only.in",
        "infra/image/requirements-files-only.lock",
        kind="files-only",
    ),
    Lock("peers", "bench/peers-requirements.in", "bench/peers-requirements.lock"),
)


def direct_requirements(lock: Lock) -> list[Requirement]:
    """The requirements the lock is made from: pyproject's dependencies (and the extra), or the .in file's."""
    if lock.source.endswith("pyproject.toml"):
        project = tomllib.loads(lock.source_path.read_text(encoding="utf-8"))["project"]
        lines = list(project["dependencies"])
        if lock.extra:
            lines += project["optional-dependencies"][lock.extra]
        return [Requirement(line) for line in lines]
    found = []
    for raw in lock.source_path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            found.append(Requirement(line))
    return found


def input_digest(lock: Lock) -> str:
    """sha256 of what the lock depends on: the requirements (and Python range) in a canonical form."""
    payload: dict[str, object] = {"requirements": [str(r) for r in direct_requirements(lock)]}
    if lock.source.endswith("pyproject.toml"):
        payload["requires-python"] = tomllib.loads(lock.source_path.read_text(encoding="utf-8"))["project"][
            "requires-python"
        ]
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def recorded_digest(text: str) -> str | None:
    """The input digest a lock recorded when it was made."""
    for line in text.splitlines():
        if line.startswith(DIGEST_PREFIX):
            return line[len(DIGEST_PREFIX) :].strip()
    return None


def problems(lock: Lock) -> list[str]:
    """Why ``lock`` no longer matches its input (nothing when it does)."""
    fix = f"run `make lock` to regenerate {lock.output} from {lock.source}"
    if not lock.output_path.is_file():
        return [f"{lock.output} is missing: {fix}"]
    text = lock.output_path.read_text(encoding="utf-8")
    pins = read_pins(text)
    found = []
    for requirement in direct_requirements(lock):
        name = canonicalize_name(requirement.name)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": lock.extra or ""}):
            continue
        if name not in pins:
            found.append(f"{requirement} is in {lock.source} but not in {lock.output}: {fix}")
        elif not requirement.specifier.contains(Version(pins[name]), prereleases=True):
            found.append(
                f"{lock.source} asks for {requirement}, {lock.output} has {name}=={pins[name]}: {fix}"
            )
    if lock.constrained:
        tested = read_pins(PROJECT.output_path.read_text(encoding="utf-8"))
        own = own_pins(lock)
        for name, version in sorted(pins.items()):
            if name in tested and name not in own and tested[name] != version:
                found.append(
                    f"{lock.output} has {name}=={version}, the tested {PROJECT.output} has {tested[name]}: {fix}"
                )
    if not found and recorded_digest(text) != input_digest(lock):
        found.append(f"{lock.source} changed since {lock.output} was made: {fix}")
    return found


def own_pins(lock: Lock) -> dict[str, str]:
    """``{name: version}`` of the exact pins the lock's input writes itself (the rest come from elsewhere)."""
    return {
        canonicalize_name(r.name): spec.version
        for r in direct_requirements(lock)
        for spec in r.specifier
        if spec.operator == "=="
    }


def _with_digest(text: str, lock: Lock) -> str:
    """The lock's text with the input digest recorded after pip-compile's header."""
    lines = [line for line in text.splitlines() if not line.startswith(DIGEST_PREFIX)]
    header_end = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    lines.insert(header_end, f"{DIGEST_PREFIX}{input_digest(lock)}")
    return "\n".join(lines) + "\n"


TESTED = "tested.txt"
"""The constraints file a constrained lock is compiled against (the project lock's pins)."""


def _constraints(lock: Lock, folder: Path) -> list[str]:
    """pip-compile's ``-c`` for a constrained lock: the project lock's pins but those the input sets."""
    if not lock.constrained:
        return []
    own = own_pins(lock)
    tested = read_pins(PROJECT.output_path.read_text(encoding="utf-8"))
    path = folder / TESTED
    path.write_text(
        "".join(f"{n}=={v}\n" for n, v in sorted(tested.items()) if n not in own), encoding="utf-8"
    )
    return ["--constraint", str(path)]


def compile_resolved(lock: Lock) -> None:
    """pip-compile the lock (keeping its current pins where the input still allows them)."""
    with tempfile.TemporaryDirectory(prefix="lock-") as scratch:
        command = [sys.executable, "-m", "piptools", "compile", "--quiet", "--generate-hashes"]
        command += ["--allow-unsafe", "--strip-extras", "--no-emit-index-url", "--no-emit-find-links"]
        command += ["--output-file", lock.output]
        if lock.extra:
            command += ["--extra", lock.extra]
        command += _constraints(lock, Path(scratch))
        # pip-compile's header names the command that regenerates the file.
        env = {**os.environ, "CUSTOM_COMPILE_COMMAND": "make lock"}
        subprocess.run([*command, lock.source], cwd=ROOT, env=env, check=True)
        # pip-compile names the constraints file in its "via" comments: name what it holds instead of
        # the scratch path, so that a lock compiled again changes only where a pin or a hash does.
        written = lock.output_path.read_text(encoding="utf-8")
        written = written.replace(str(Path(scratch) / TESTED), f"{PROJECT.output} (tested pins)")
    lock.output_path.write_text(_with_digest(written, lock), encoding="utf-8")


def compile_files_only(lock: Lock) -> None:
    """Download each ``--no-deps`` requirement and record its file's sha256."""
    body = [
        "#",
        "# This file is autogenerated by `make lock` (scripts/locks.py) from "
        f"{Path(lock.source).name}: installed with --no-deps.",
        "#",
    ]
    with tempfile.TemporaryDirectory(prefix="lock-") as scratch:
        for requirement in direct_requirements(lock):
            folder = Path(scratch) / canonicalize_name(requirement.name)
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:"]
                + ["--dest", str(folder), str(requirement)],
                check=True,
            )
            [wheel] = folder.glob("*.whl")
            name, version, _, _ = parse_wheel_filename(wheel.name)
            digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
            body += [f"{name}=={version} \\", f"    --hash=sha256:{digest}", f"    # via -r {lock.source}"]
    lock.output_path.write_text(_with_digest("\n".join(body) + "\n", lock), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("action", choices=("compile", "check"))
    parser.add_argument(
        "names", nargs="*", help=f"locks to compile (all by default): {[x.name for x in LOCKS]}"
    )
    args = parser.parse_args(argv)
    chosen = [lock for lock in LOCKS if not args.names or lock.name in args.names]
    if args.action == "compile":
        # The project's lock first: the constrained locks take their versions from it.
        for lock in chosen:
            print(f"locking {lock.name}: {lock.source} -> {lock.output}")
            (compile_files_only if lock.kind == "files-only" else compile_resolved)(lock)
        return 0
    found = [problem for lock in chosen for problem in problems(lock)]
    for problem in found:
        print(f"lock out of date: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
