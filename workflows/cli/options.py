"""The options several ``deploybench`` commands spell the same way, as ``Annotated`` aliases.

A command declares ``region: RegionOption = None`` and gets the flag, its metavar and its help text
as every other command has them; the default stays in the command's signature, where typer reads it.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from workflows.hosting.specs import mode_names

JsonOption = Annotated[
    bool,
    typer.Option("--json", help="Print the result as JSON on stdout; an error is a JSON object on stderr."),
]
RegionOption = Annotated[
    str | None,
    typer.Option(
        "--region",
        metavar="REGION",
        help="AWS region (default: AWS_REGION, then AWS_DEFAULT_REGION, then the profile's region).",
        show_default=False,
    ),
]
ProfileOption = Annotated[
    str | None,
    typer.Option(
        "--profile",
        metavar="NAME",
        help="AWS profile from ~/.aws/config (default: AWS_PROFILE, then the default profile).",
        show_default=False,
    ),
]
StackOption = Annotated[
    str, typer.Option(metavar="STACK", help="CloudFormation stack that deployed deploybench.")
]
"""``--stack-name``; its default is ``workflows.naming.STACK_NAME``."""
BucketOption = Annotated[
    str | None, typer.Option(metavar="BUCKET", help="Artifact bucket (default: the stack's output).")
]


HostingMode = Enum("HostingMode", {name.replace("-", "_"): name for name in mode_names()}, type=str)  # type: ignore[misc]
"""Every ``hosting.mode`` as a choice: a flag taking one refuses any other value, naming those it takes."""
