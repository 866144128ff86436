"""The CLI output the README and the docs quote, produced by the CLI itself: a quote cannot drift.

    python scripts/quotes.py check   # each quoted output is what the CLI prints now (tests run this too)
    python scripts/quotes.py write   # `make quotes`: rewrite the quoted outputs from the CLI

A quote is a ``$ deploybench ...`` line in a ```` ```text ```` block whose spec file is one of
``QUOTED_SPECS``; what follows it, up to the next ``$`` line or the block's end, is the output. The
output names versions and counts read from the installed packages (botocore's enums, for one), so
after `make lock` moves a version, `make quotes` brings the pages along.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from typer.testing import CliRunner  # noqa: E402

from workflows.cli.app import app  # noqa: E402

QUOTED_SPECS = {
    "typo.yaml": "name: typo\nhosting:\n  instance_type_fallbacks: [ml.c6i.xlargee]\n",
    "gpu-direct.yaml": (
        "name: gpu-direct\nhosting:\n  mode: multi-container\n  instance_type_fallbacks: [ml.g5.xlarge]\n"
        "  models: [{name: aux}]\n"
    ),
    "long.yaml": "name: long\nmodel: {max_sequence_length: 4096}\n",
}
"""The spec files the quoted refusals name (the pages show their output, not their text)."""
BLOCK = re.compile(r"(```text\n)(.*?)(```)", re.S)
COMMAND = re.compile(r"^\$ (deploybench .*)$", re.M)


def pages() -> list[Path]:
    """The README and every docs page."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def quoted_command(command: str) -> bool:
    """Whether a ``$`` line is a quote this script produces (it names one of ``QUOTED_SPECS``)."""
    return any(word in QUOTED_SPECS for word in shlex.split(command))


def run(command: str) -> tuple[int, str]:
    """(exit code, stderr) of ``command`` run in-process from a folder holding the spec file it names."""
    words = shlex.split(command)
    before = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="quote-") as folder:
        for word in words:
            if word in QUOTED_SPECS:
                Path(folder, word).write_text(QUOTED_SPECS[word], encoding="utf-8")
        os.chdir(folder)
        try:
            result = CliRunner().invoke(app, words[1:])
        finally:
            os.chdir(before)
    return result.exit_code, result.stderr.strip()


def refresh(text: str) -> str:
    """``text`` with the output under each quoted command replaced by what the CLI prints now."""

    def block(found: re.Match[str]) -> str:
        body = found.group(2)
        parts = COMMAND.split(body)
        # parts: [before, command, output, command, output, ...]
        for index in range(1, len(parts), 2):
            if quoted_command(parts[index]):
                trailer = "\n\n" if index + 2 < len(parts) else "\n"
                parts[index + 1] = "\n" + run(parts[index])[1] + trailer
        rebuilt = parts[0] + "".join(f"$ {parts[i]}{parts[i + 1]}" for i in range(1, len(parts), 2))
        return found.group(1) + rebuilt + found.group(3)

    return BLOCK.sub(block, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("action", choices=("check", "write"))
    args = parser.parse_args(argv)
    stale = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        fresh = refresh(text)
        if fresh != text:
            stale.append(page.relative_to(ROOT))
            if args.action == "write":
                page.write_text(fresh, encoding="utf-8")
    if stale and args.action == "check":
        print(
            f"quoted CLI output out of date in {[str(p) for p in stale]}: run `make quotes`", file=sys.stderr
        )
        return 1
    for page in stale:
        print(f"rewrote the quoted output in {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
