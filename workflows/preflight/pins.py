"""F28: a requirements.txt pin the container's own libraries do not satisfy.

The HF inference DLC ships transformers (its tag says which: ``2.6.0-transformers4.51.3-cpu-...``) and
its inference toolkit is built against it. At endpoint start the toolkit runs
``pip install -r code/requirements.txt``: a pin that excludes the shipped version replaces the
library under the toolkit (the field's optimum case pulled transformers<4.58 onto a 5.x image), minutes
into the start and with a model that then loads against another library than the one it was
converted and tested with.
"""

from __future__ import annotations

import re

from packaging.specifiers import InvalidSpecifier, Specifier
from packaging.version import InvalidVersion, Version

from workflows.artifact.requirements import requirements_of, satisfied_by
from workflows.contracts import Finding

# Libraries the image names in its tag, as <name><version>.
TAGGED_LIBRARIES = ("transformers",)


def image_library_version(image: str, library: str) -> str | None:
    """``...:2.6.0-transformers4.51.3-cpu-py312-ubuntu22.04`` -> ``4.51.3`` for ``transformers``."""
    tag = image.rpartition(":")[2]
    match = re.search(rf"(?:^|-){re.escape(library)}(\d+(?:\.\d+)*)", tag)
    return match.group(1) if match else None


def satisfies(version: str, op: str, wanted: str) -> bool:
    """Whether ``version`` meets one specifier (``==4.30.*`` and ``~=4.51.0`` included), as pip reads it."""
    try:
        return Specifier(f"{op}{wanted}").contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return False


def check_library_pins(*, requirements: str | None, image: str) -> list[Finding]:
    """F28: every pin of a library the image ships is satisfied by the image's version."""
    findings = []
    for library in TAGGED_LIBRARIES:
        shipped = image_library_version(image, library)
        if shipped is None or not requirements:
            continue
        clashes = sorted(
            {line.text for line in requirements_of(requirements, library) if not satisfied_by(line, shipped)}
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
