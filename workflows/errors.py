"""Every error the workflow can raise, in one place.

A class name here *is* the Step Functions error name: a Lambda handler that raises
``CapacityStall`` fails its task with ``Error: "CapacityStall"``, and the state machines
build their ``Retry``/``Catch`` ``ErrorEquals`` lists from these classes. Names are
therefore unique and stable; renaming one is a change to the orchestration contract.

``RetryableError`` subclasses are transient (throttling, a resource still changing state):
the definitions retry them with backoff. ``TerminalError`` subclasses go to the catch path
(diagnose, tear down, fail).
"""

from __future__ import annotations

from typing import Any

FAILED = 1
"""A blocking preflight finding, a failed execution or benchmark, an AWS call refused."""
USAGE = 2
"""Bad flags, a spec or input file that does not validate, or an AWS setup problem (credentials,
region, profile, stack)."""


class DeploybenchError(Exception):
    """Base of every error the workflow raises on purpose.

    Every error class below is one row of the error table, declared in its class line: its name (the
    Step Functions error name), its base (retried or caught), its ``fix`` and, for what the user gave
    (a spec, a file, a flag, the AWS set-up), the base ``UserError``; its docstring says when it is raised.
    """

    default_fix: str = (
        "read the message: it names what failed; `deploybench diagnose --log FILE` names a catalogued failure"
    )
    """What to do when the raiser named no fix of its own (every class has one: the CLI never prints none)."""

    retryable: bool = False

    exit_code: int = FAILED
    """What the CLI exits with when it stops on this error: USAGE for what the user gave, FAILED for
    work that failed."""

    def __init_subclass__(
        cls, *, fix: str | None = None, exit_code: int | None = None, **kwargs: Any
    ) -> None:
        super().__init_subclass__(**kwargs)
        if fix is not None:
            cls.default_fix = fix
        if exit_code is not None:
            cls.exit_code = exit_code

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        self.message = message
        self.fix = fix
        super().__init__(f"{message} Fix: {fix}" if fix else message)


class RetryableError(DeploybenchError):
    """Transient: the same call is expected to succeed later."""

    default_fix = "try again: the call is expected to succeed later"

    retryable = True


class TerminalError(DeploybenchError):
    """Permanent for this input: retrying the same call cannot help."""

    default_fix = "change what the message names; retrying the same call cannot help"


class UserError(TerminalError, exit_code=USAGE):
    """Permanent, and about what the user gave (a spec, a file, a flag, the AWS set-up): exits USAGE."""


# --- retryable -----------------------------------------------------------------------------


class AwsThrottled(RetryableError, fix="try again later, or lower the request rate (benchmark.concurrency)"):
    """An AWS API answered ThrottlingException / TooManyRequests."""


class AwsServiceUnavailable(
    RetryableError, fix="try again later; if it persists, check the AWS Health Dashboard for the region"
):
    """An AWS API answered 5xx (InternalFailure, ServiceUnavailable)."""


class ResourceBusy(RetryableError, fix="wait until the resource leaves its changing state, then try again"):
    """A resource is changing state (e.g. deleting an endpoint that is still Creating)."""


# --- terminal: input -----------------------------------------------------------------------


class SpecInvalid(
    UserError,
    fix="correct the field the message names; `deploybench schema` lists every field and what it accepts",
):
    """The run specification does not validate."""


class ModelSourceInvalid(
    UserError,
    fix="point model.source at 'bundled', a model folder, s3://bucket/prefix/, hf://org/name or org/name",
):
    """The model source is not a usable Hugging Face model folder."""


class HubUnreachable(
    TerminalError,
    fix="check the network and HF_ENDPOINT (unset it for huggingface.co); unset HF_HUB_OFFLINE, or download the model (`hf download org/name --local-dir DIR`) and pass its folder",
):
    """The Hugging Face Hub could not be reached (network, proxy, HF_ENDPOINT, or HF_HUB_OFFLINE set):
    the spec may be fine; the work could not start."""


class UnsupportedArchitecture(
    UserError,
    fix="pick a model of a supported encoder family (`deploybench schema`, model.source)",
):
    """The model's architecture has no export route."""


# --- terminal: build -----------------------------------------------------------------------


class ConversionFailed(
    TerminalError,
    fix="check the model loads with transformers (AutoModel.from_pretrained), or try convert.optimize: none",
):
    """Export to ONNX failed."""


class ParityCheckFailed(TerminalError, fix="try convert.optimize: none, or convert.precision: fp32"):
    """The ONNX model's outputs differ from PyTorch beyond tolerance."""


class QuantizationCollapsed(TerminalError, fix="convert with convert.precision: fp32 (F29)"):
    """INT8 predictions collapsed against fp32 (F29)."""


class OutputNotWritable(UserError, fix="pass an --out folder that is empty (or new) and writable"):
    """The artifact folder or tarball cannot be written where asked."""


class ArtifactIncomplete(
    UserError,
    fix="convert the model again (`deploybench convert`) and pack the new folder (F22)",
):
    """A file the manifest names is missing, truncated or does not load (F22)."""


class RequirementsInvalid(
    UserError,
    fix="correct the line of code/requirements.txt the message names (pip's requirement syntax)",
):
    """A line of code/requirements.txt that pip could not read (the container would fail at start)."""


class PreflightBlocked(
    TerminalError, fix="apply each blocking finding's fix (`deploybench preflight SPEC`), then run again"
):
    """A static check found a failure that would happen on AWS."""


# --- terminal: deploy ----------------------------------------------------------------------


class DeployRejected(
    TerminalError, fix="correct the field the message names; `deploybench preflight SPEC` checks it offline"
):
    """SageMaker rejected a create call (ValidationException and the like)."""


class AwsAccessDenied(
    TerminalError,
    fix="grant the action the message names, or set the spec field that meets the policy's condition (F38)",
):
    """An AWS call was denied (AccessDenied): by the role's policies, a permissions boundary, or an
    organization's service control policy (F38); the message names the action and what is missing."""


class EndpointFailed(
    TerminalError, fix="read the endpoint's FailureReason and logs: `deploybench diagnose --endpoint NAME`"
):
    """The endpoint reached Failed."""


class CapacityStall(
    TerminalError, fix="add a fallback to hosting.instance_type_fallbacks, or try another region (F06)"
):
    """Creating with no instance ever assigned, past the stall threshold (F06)."""


class EndpointWaitTimeout(
    TerminalError,
    fix="raise wait.timeout_min, or `deploybench diagnose --endpoint NAME` to see why it is slow",
):
    """The endpoint did not reach InService within the wait budget."""


class InferenceComponentFailed(
    TerminalError, fix="check that the copies fit the instances: `deploybench diagnose --endpoint NAME` (F09)"
):
    """An inference component reached Failed, or is InService with fewer copies than desired (F09)."""


class ServedModelMismatch(
    TerminalError,
    fix="serve the model the run packed: `deploybench diagnose --endpoint NAME` names the mismatch (F26)",
):
    """The endpoint serves another model than the one requested (vLLM's default model, F26)."""


class NotServableLocally(
    UserError,
    fix="run without --local on AWS, or pick a hosting mode the local engine serves (realtime, serverless)",
):
    """The hosting mode needs what the local engine does not have (Docker, a GPU, the engine's image)."""


# --- terminal: serve and measure -----------------------------------------------------------


class InvocationFailed(
    TerminalError,
    fix="read the endpoint's logs (deploybench-results/<run id>/engine/endpoint-logs/ locally, CloudWatch on AWS)",
):
    """The endpoint answered an invocation with an error."""


class WarmupFailed(
    TerminalError,
    fix="read the endpoint's logs; lower benchmark.sequence_lengths or batch sizes if the model runs out of memory",
):
    """A shape never produced a successful, stable invocation during warmup."""


class BenchmarkFailed(
    TerminalError, fix="read the run's logs; lower benchmark.concurrency or duration and run again"
):
    """The measurement could not be completed."""


class BenchmarkJobFailed(
    TerminalError,
    fix="read the processing job's logs (CloudWatch /aws/sagemaker/ProcessingJobs), or set benchmark.runner: lambda",
):
    """The benchmark processing job failed, was stopped, or ran past its time."""


class ResultInvalid(
    UserError,
    fix="pass a result.json a run of this version wrote (deploybench-results/<run id>/result.json)",
):
    """A result file cannot be read, or its schema version is unknown."""


class CatalogueInvalid(
    UserError,
    fix="correct the named field of the named file (the schema is the packaged catalogue's: `deploybench catalogue F06 --json` shows an entry), or move the file out of catalogue.d/",
):
    """A user's failure catalogue file (``--catalogue``, ``catalogue.d/``) does not validate."""


# --- terminal: teardown --------------------------------------------------------------------


class TeardownIncomplete(
    TerminalError,
    fix="run `deploybench janitor --dry-run`, then `deploybench janitor` to delete what is left",
):
    """Resources tagged for the run still exist after teardown."""


# --- terminal: orchestration (sweeps, redeploys) -------------------------------------------


class ChildExecutionFailed(
    TerminalError, fix="open the child execution the message names (its console URL) for its own error"
):
    """A child execution (a sweep item, a redeploy) ended other than SUCCEEDED.

    On AWS a ``startExecution.sync:2`` task fails with ``States.TaskFailed``; the local engine's
    stand-in raises this instead. Both go to the same ``States.ALL`` catcher.
    """


class SweepRunsFailed(TerminalError, fix="read the sweep report: it lists each failed run and its diagnosis"):
    """At least one run of a benchmark sweep failed; the report lists which and why."""


class PerformanceRegression(
    TerminalError,
    fix="compare the sweep report with its baseline; accept the new figures or fix the regression",
):
    """A sweep measured worse than its baseline beyond the sweep's thresholds."""


# --- terminal: the command line and its AWS set-up (exit 2; never raised inside an execution) ---


class UsageError(UserError, fix="see `deploybench COMMAND -h` for what the command takes"):
    """A flag, argument or option value the command does not take."""


class NoCredentials(
    UserError,
    fix="run `aws configure`, or `aws sso login --profile NAME` and pass --profile NAME (or set AWS_PROFILE)",
):
    """No usable AWS credentials were found."""


class ExpiredToken(UserError, fix="run `aws sso login` (or refresh the credentials) and try again"):
    """The AWS credentials or SSO session have expired."""


class InvalidCredentials(
    UserError,
    fix="run `aws configure` with a valid key, or `aws sso login --profile NAME`",
):
    """AWS refused the credentials (a wrong key, a deleted user)."""


class ProfileNotFound(
    UserError,
    fix="pass --profile with a profile of ~/.aws/config (`aws configure list-profiles`) or unset AWS_PROFILE",
):
    """The AWS profile named by --profile or AWS_PROFILE is not in ~/.aws/config."""


class NoRegion(
    UserError,
    fix="pass --region (e.g. --region eu-west-1), set AWS_REGION, or set a region in the profile",
):
    """No AWS region is set."""


class StackNotFound(
    UserError,
    fix="deploy it (`npx aws-cdk@2 deploy`, README 'AWS quick start'), or pass --stack-name / --region",
):
    """The deployed deploybench stack is not in the region."""


# --- not a Step Functions error: the CLI process itself was told to stop ---------------------


class RunInterrupted(KeyboardInterrupt):
    """The local run received SIGINT, SIGTERM or SIGHUP: it tears down and exits 128 + the signal.

    A ``KeyboardInterrupt`` so that no ``except Exception`` on the way swallows it, exactly as Ctrl-C.
    """

    def __init__(self, signum: int) -> None:
        import signal

        self.signum = signum
        self.signal_name = signal.Signals(signum).name
        self.interruption: object = None
        """What the run tore down and where its partial results are (``workflows.execution.pipeline.Interruption``)."""
        super().__init__(self.signal_name)


def _leaves(base: type[DeploybenchError]) -> list[type[DeploybenchError]]:
    found: list[type[DeploybenchError]] = []
    for cls in base.__subclasses__():
        found.append(cls)
        found.extend(_leaves(cls))
    return found


def fix_for(name: str) -> str | None:
    """The class fix of the error called ``name``; None when no class here has that name."""
    found = next((cls for cls in all_errors() if cls.__name__ == name), None)
    return found.default_fix if found else None


def all_errors() -> list[type[DeploybenchError]]:
    """Every concrete error class, in definition order."""
    return [cls for cls in _leaves(DeploybenchError) if cls not in (RetryableError, TerminalError, UserError)]
