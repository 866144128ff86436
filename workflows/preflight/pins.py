"""F28: a requirements.txt pin the container's own libraries do not satisfy.

The HF inference DLC ships transformers (its tag says which: ``2.6.0-transformers4.51.3-cpu-...``) and
its inference toolkit is built against it. At endpoint start the toolkit runs
``pip install -r code/requirements.txt``: a pin that excludes the shipped version replaces the
library under the toolkit (the field's optimum case pulled transformers<4.58 onto a 5.x image), minutes
into the start and with a model that then loads against another library than the one it was
converted and tested with.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable

from workflows.contracts import Finding

# Libraries the image names in its tag, as <name><version>.
TAGGED_LIBRARIES = ("transformers",)
_SPECIFIER = re.compile(r"(==|!=|>=|<=|~=|>|<)\s*([0-9][0-9A-Za-z.*+!-]*)")
_COMPARE: dict[str, Callable[[tuple[int, ...], tuple[int, ...]], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}


def image_library_version(image: str, library: str) -> str | None:
    """``...:2.6.0-transformers4.51.3-cpu-py312-ubuntu22.04`` -> ``4.51.3`` for ``transformers``."""
    tag = image.rpartition(":")[2]
    match = re.search(rf"(?:^|-){re.escape(library)}(\d+(?:\.\d+)*)", tag)
    return match.group(1) if match else None


def _release(version: str) -> tuple[int, ...]:
    parts = []
    for part in version.split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        parts.append(int(digits.group()))
    return tuple(parts)


def _padded(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


def satisfies(version: str, op: str, wanted: str) -> bool:
    """Whether ``version`` meets one specifier (``==4.30.*`` and ``~=4.51.0`` included)."""
    have = _release(version)
    if op in ("==", "!="):
        prefix = wanted.endswith(".*")
        want = _release(wanted.removesuffix(".*"))
        equal = have[: len(want)] == want if prefix else _padded(have, want)[0] == _padded(have, want)[1]
        return equal if op == "==" else not equal
    if op == "~=":
        want = _release(wanted)
        return satisfies(version, ">=", wanted) and have[: len(want) - 1] == want[:-1]
    left, right = _padded(have, _release(wanted))
    return _COMPARE[op](left, right)


def pinned(requirements: str, library: str) -> list[tuple[str, str, str]]:
    """The (line, operator, version) specifiers ``requirements`` gives ``library``."""
    found: list[tuple[str, str, str]] = []
    for raw in requirements.splitlines():
        line = raw.split("#", 1)[0].strip()
        name = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)", line)
        if not name or name.group(1).lower().replace("_", "-") != library:
            continue
        found.extend((line, op, version) for op, version in _SPECIFIER.findall(line[name.end() :]))
    return found


def check_library_pins(*, requirements: str | None, image: str) -> list[Finding]:
    """F28: every pin of a library the image ships is satisfied by the image's version."""
    findings = []
    for library in TAGGED_LIBRARIES:
        shipped = image_library_version(image, library)
        if shipped is None or not requirements:
            continue
        clashes = sorted(
            {
                line
                for line, op, version in pinned(requirements, library)
                if not satisfies(shipped, op, version)
            }
        )
        for line in clashes:
            findings.append(
                Finding(
                    id="F28",
                    severity="blocking",
                    message=f"code/requirements.txt pins {line}, which the container's {library} {shipped} does "
                    "not satisfy: at start pip would replace the library the inference toolkit was built with, "
                    "and the model would load against another version than it was converted with.",
                    fix=f"remove the {library} line (the container ships {library} {shipped}), or pick an image "
                    "whose version satisfies it with hosting.image",
                    evidence=f"{line}; image {image}",
                )
            )
    return findings
