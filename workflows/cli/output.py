"""What every ``deploybench`` command shares: where output goes, exit codes, errors, AWS sessions.

A command prints its result on stdout (a table, or JSON with ``--json``) and everything else on
stderr: errors, warnings and, in JSON mode, live progress. So ``deploybench definition x > asl.json``
never writes an error into the file, and ``deploybench preflight --json | jq`` always reads JSON.

A command adopts the conventions in three lines (its options from :mod:`workflows.cli.options`)::

    @guarded
    def mycommand(..., region: RegionOption = None, profile: ProfileOption = None, as_json: JsonOption = False):
        session = aws_session(region, profile)
        ...
        emit(result_dict, as_json=as_json, human=lambda: out.print("..."))

``guarded`` turns a ``DeploybenchError``, missing or expired AWS credentials, an unknown profile or
a missing region into one line on stderr (a JSON error object with ``--json``) and the documented
exit code, never a traceback.
"""

from __future__ import annotations

import contextvars
import functools
import json
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer
from rich.console import Console

from workflows.errors import (
    FAILED,
    USAGE,
    DeploybenchError,
    ExpiredToken,
    InvalidCredentials,
    NoCredentials,
    NoRegion,
    ProfileNotFound,
    StackNotFound,
    UsageError,
    fix_for,
)

if TYPE_CHECKING:
    from boto3.session import Session
    from rich.table import Table

# --- exit codes: the same for every command (docs/cli.md, "Exit codes") ---------------------------------
OK = 0
# FAILED (1) and USAGE (2) are declared with the errors: each error class names its own.
UNDIAGNOSED = 3
"""``diagnose`` found no failure catalogue entry for the evidence."""

AWS_CALL_FIX = "check the region, the network and the message's AWS error code, then try again"
"""The fix of an AWS call's own error (botocore's class names it), which no class of workflows.errors has."""

RESULTS_DIR = Path("deploybench-results")
"""Every command's default output folder: runs in <run id>/, sweeps in sweeps/<name>/<sweep id>/,
benchmarks of an endpoint in bench-<endpoint>-<time>/, reports in report/, artifacts in artifacts/<name>/."""

out = Console(highlight=False, soft_wrap=True)
"""The result: stdout."""
err = Console(stderr=True, highlight=False, soft_wrap=True)
"""Errors, warnings, and progress when stdout carries JSON: stderr."""

_json_mode: contextvars.ContextVar[bool] = contextvars.ContextVar("deploybench_json_mode", default=False)


def json_mode() -> bool:
    """True while a ``guarded`` command runs with ``--json``."""
    return _json_mode.get()


def progress() -> Console:
    """Where live progress goes: stdout for people, stderr when stdout carries JSON."""
    return err if json_mode() else out


def print_json(data: Any) -> None:
    """One JSON document on stdout."""
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
    sys.stdout.flush()


def print_table(table: Table, console: Console | None = None) -> None:
    """A table on stdout (or ``console``); piped or redirected, no cell wraps, so a URI or an ARN can
    be copied whole (on a terminal it folds to the terminal's width)."""
    console = console or out
    if console.is_terminal:
        console.print(table)
        return
    for column in table.columns:
        column.no_wrap = True
        column.overflow = "ignore"
    table.expand = False
    # Rich never prints wider than its console (80 columns when not a terminal): a console as wide as
    # the table's widest row prints every row whole.
    from rich.measure import Measurement

    wide = Console(file=console.file, width=100_000, highlight=False, soft_wrap=True, color_system=None)
    width = Measurement.get(wide, wide.options, table).maximum
    Console(file=console.file, width=max(width, 1), highlight=False, soft_wrap=True, color_system=None).print(
        table
    )


def emit(data: Any, *, as_json: bool, human: Callable[[], None]) -> None:
    """The result: ``data`` as JSON with ``--json``, else what ``human`` prints."""
    if as_json:
        print_json(data)
    else:
        human()


def error_body(message: str, *, code: int, fix: str | None, kind: str) -> dict[str, Any]:
    """The one error object every command prints under ``--json``: ``fix`` is never null."""
    fix = fix or fix_for(kind) or AWS_CALL_FIX
    return {"error": {"type": kind, "message": message, "fix": fix, "exit_code": code}}


def print_error(message: str, *, code: int, fix: str | None, kind: str, as_json: bool) -> None:
    """One error on stderr: the JSON object, or the same words as one line (markup escaped, so a
    bracketed list such as ``[ml.c6i.xlarge, ...]`` prints as written)."""
    from rich.markup import escape

    body = error_body(message, code=code, fix=fix, kind=kind)
    if as_json:
        sys.stderr.write(json.dumps(body) + "\n")
        sys.stderr.flush()
    else:
        text = f"{body['error']['message']} Fix: {body['error']['fix']}"
        err.print(f"[bold red]{escape(kind)}[/]: {escape(text)}")


def fail(
    message: str, *, code: int = USAGE, fix: str | None = None, kind: str = UsageError.__name__
) -> NoReturn:
    """Print one error on stderr (a JSON object in JSON mode) and exit with ``code``.

    Args:
        message: what is wrong, naming the flag, field or resource.
        code: the exit code (``USAGE`` or ``FAILED``).
        fix: what to do about it; the class fix of ``kind`` when None.
        kind: the error's name: a ``workflows.errors`` class name (or, for an AWS call's own error,
            botocore's).
    """
    print_error(message, code=code, fix=fix, kind=kind, as_json=json_mode())
    raise typer.Exit(code)


def exit_code_for(error: DeploybenchError) -> int:
    """2 for input the user gave (spec, files, flags), 1 for work that failed (the class's ``exit_code``)."""
    return error.exit_code


def fail_with(error: DeploybenchError, *, code: int | None = None) -> NoReturn:
    """``fail`` with a workflow error's class name, message and fix."""
    fail(
        error.message,
        code=exit_code_for(error) if code is None else code,
        fix=error.fix or error.default_fix,
        kind=type(error).__name__,
    )


# --- AWS ---------------------------------------------------------------------------------------------
_EXPIRED = {"ExpiredToken", "ExpiredTokenException", "RequestExpired", "TokenRefreshRequired"}
_INVALID = {
    "InvalidClientTokenId",
    "UnrecognizedClientException",
    "InvalidSignatureException",
    "SignatureDoesNotMatch",
    "AuthFailure",
    "InvalidAccessKeyId",
}
LOGIN = "run `aws configure`, or `aws sso login --profile NAME` and pass --profile NAME (or set AWS_PROFILE)"


def aws_session(region: str | None = None, profile: str | None = None) -> Session:
    """The boto3 session of a command: ``--profile`` else AWS_PROFILE; ``--region`` else AWS_REGION,
    else AWS_DEFAULT_REGION, else the profile's region (the AWS CLI's order; boto3 itself reads
    every one of these but AWS_REGION)."""
    import boto3

    region = region or os.environ.get("AWS_REGION") or None
    return boto3.session.Session(region_name=region, profile_name=profile or None)


def session_region(session: Session) -> str:
    """The session's region, or exit 2 saying how to choose one."""
    if not session.region_name:
        fail("no AWS region is set.", fix=NoRegion.default_fix, kind=NoRegion.__name__)
    return str(session.region_name)


def aws_setup_problem(error: BaseException) -> tuple[str, str, str] | None:
    """(kind, message, fix) when ``error`` (or what caused it) is an AWS credentials, profile or region
    problem, else None."""
    from botocore import exceptions as bx

    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, bx.NoCredentialsError | bx.PartialCredentialsError):
            return NoCredentials.__name__, "no usable AWS credentials were found.", LOGIN
        if isinstance(seen, bx.TokenRetrievalError | bx.SSOTokenLoadError | bx.UnauthorizedSSOTokenError):
            return (
                ExpiredToken.__name__,
                f"the AWS SSO session has expired ({seen}).",
                "run `aws sso login` and try again",
            )
        if isinstance(seen, bx.CredentialRetrievalError):
            return NoCredentials.__name__, f"AWS credentials could not be retrieved ({seen}).", LOGIN
        if isinstance(seen, bx.ProfileNotFound):
            return (
                ProfileNotFound.__name__,
                f"{seen}.",
                "pass --profile with a profile of ~/.aws/config (`aws configure list-profiles`) or unset AWS_PROFILE",
            )
        if isinstance(seen, bx.NoRegionError):
            return (
                NoRegion.__name__,
                "no AWS region is set.",
                "pass --region (e.g. --region eu-west-1), set AWS_REGION, or set a region in the profile",
            )
        if isinstance(seen, bx.ClientError):
            code = str(seen.response.get("Error", {}).get("Code", ""))
            if code in _EXPIRED:
                return (
                    ExpiredToken.__name__,
                    f"the AWS credentials have expired ({code}).",
                    "refresh them (" + LOGIN + ")",
                )
            if code in _INVALID:
                return InvalidCredentials.__name__, f"AWS refused the credentials ({code}).", LOGIN
        seen = seen.__cause__ or seen.__context__
    return None


F = TypeVar("F", bound=Callable[..., Any])


def _one_line_warning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    from rich.markup import escape

    err.print(f"[yellow]warning[/]: {escape(str(message))}", markup=True)


def guarded(command: F) -> F:
    """Wrap a command: JSON mode from its ``as_json`` argument, warnings as one stderr line each, and
    every expected failure as one error line (or JSON object) with the documented exit code."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        token = _json_mode.set(bool(kwargs.get("as_json", False)))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("always", FutureWarning)
                warnings.showwarning = _one_line_warning
                return command(*args, **kwargs)
        except DeploybenchError as error:
            problem = aws_setup_problem(error)
            if problem:
                fail(problem[1], fix=problem[2], kind=problem[0])
            fail_with(error)
        except (BotoCoreError, ClientError) as error:
            problem = aws_setup_problem(error)
            if problem:
                fail(problem[1], fix=problem[2], kind=problem[0])
            fail(str(error), code=FAILED, kind=type(error).__name__)
        finally:
            _json_mode.reset(token)

    return wrapper  # type: ignore[return-value]


def stack_outputs(session: Session, stack_name: str) -> dict[str, str]:
    """The deployed stack's outputs, or exit 2 naming the stack, the region and the fix."""
    from botocore.exceptions import ClientError

    try:
        stacks = session.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"]
    except ClientError as error:
        if "does not exist" not in str(error):
            raise
        fail(
            f"CloudFormation stack {stack_name} does not exist in {session.region_name}.",
            fix="deploy it (`npx aws-cdk@2 deploy`, README 'AWS quick start'), or pass --stack-name / --region",
            kind=StackNotFound.__name__,
        )
    return {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])}
