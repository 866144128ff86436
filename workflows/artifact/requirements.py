"""``code/requirements.txt`` read as pip reads it, each requirement parsed by ``packaging`` (PEP 508).

The serving container runs ``pip install -r code/requirements.txt`` at start, so a line pip cannot
read fails the endpoint minutes into its creation; here it fails at once, naming the line. Lines
that name no distribution are skipped as pip treats them: blank lines, comments, options
(``-r``, ``--index-url``, ``-e``...) and bare URLs or paths of archives. A requirement's own pip
options (`` --hash=...``) are dropped before parsing; a line ending in a backslash continues on the
next one.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from workflows.errors import RequirementsInvalid

REQUIREMENTS_FILE = "code/requirements.txt"
# What a requirement line may be, for the error's "accepted" part.
ACCEPTED = (
    "a PEP 508 requirement (name, optional [extras], version specifiers such as ==1.2 or >=4.51,<5, "
    "an optional '; marker'), 'name @ URL', an option line starting with '-', or a bare URL or path"
)


@dataclass(frozen=True)
class RequirementLine:
    """One requirement of the file: where it is, its text, and what ``packaging`` read from it."""

    number: int
    text: str
    requirement: Requirement

    @property
    def name(self) -> str:
        """The distribution's canonical name (``Scikit_Learn`` -> ``scikit-learn``)."""
        return canonicalize_name(self.requirement.name)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """``(first line number, text)`` of each line once backslash continuations are joined."""
    joined: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        start, before = pending if pending is not None else (number, "")
        line = before + raw
        if line.endswith("\\"):
            pending = (start, line[:-1])
            continue
        pending = None
        joined.append((start, line))
    if pending is not None:
        joined.append(pending)
    return joined


def _names_no_distribution(line: str) -> bool:
    first = line.split()[0]
    return line.startswith("-") or "://" in first or first.startswith((".", "/", "~"))


def _without_comment(line: str) -> str:
    # pip's rule: a comment starts at '#' at the line's start or after whitespace (URLs keep '#egg=').
    if line.lstrip().startswith("#"):
        return ""
    for index, char in enumerate(line):
        if char == "#" and line[index - 1].isspace():
            return line[:index].strip()
    return line.strip()


def _without_options(line: str) -> str:
    # Per-requirement options (--hash, --config-settings) follow the requirement after whitespace.
    for marker in (" --", "\t--"):
        if marker in line:
            line = line.split(marker, 1)[0]
    return line.strip()


def parse_requirements(text: str, *, origin: str = REQUIREMENTS_FILE) -> list[RequirementLine]:
    """Every requirement of a requirements file, in order.

    Raises:
        RequirementsInvalid: a line pip could not read, with its number, its text, what a line may
            be and the fix.
    """
    parsed: list[RequirementLine] = []
    for number, raw in _logical_lines(text):
        line = _without_comment(raw)
        if not line or _names_no_distribution(line):
            continue
        requirement_text = _without_options(line)
        try:
            requirement = Requirement(requirement_text)
        except InvalidRequirement as error:
            raise RequirementsInvalid(
                f"{origin} line {number} {raw.strip()!r} is not a requirement pip can read: {str(error).splitlines()[0]}. "
                f"Accepted: {ACCEPTED}.",
                fix=f"correct or remove line {number} of {origin} (e.g. 'onnxruntime==1.31.1') and pack again",
            ) from None
        parsed.append(RequirementLine(number=number, text=line, requirement=requirement))
    return parsed


def requirement_names(text: str, *, origin: str = REQUIREMENTS_FILE) -> set[str]:
    """Canonical names of the distributions a requirements file installs.

    Raises:
        RequirementsInvalid: as ``parse_requirements``.
    """
    return {line.name for line in parse_requirements(text, origin=origin)}


def requirements_of(
    text: str, distribution: str, *, origin: str = REQUIREMENTS_FILE
) -> list[RequirementLine]:
    """The lines of a requirements file that name ``distribution`` (any spelling of its name).

    Raises:
        RequirementsInvalid: as ``parse_requirements``.
    """
    wanted = canonicalize_name(distribution)
    return [line for line in parse_requirements(text, origin=origin) if line.name == wanted]


def satisfied_by(line: RequirementLine, version: str) -> bool:
    """Whether ``version`` meets every specifier of the line (pre-releases count as versions).

    A version ``packaging`` cannot read satisfies nothing but an unconstrained line.
    """
    if not line.requirement.specifier:
        return True
    try:
        return line.requirement.specifier.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False
