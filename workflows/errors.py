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


class DeploybenchError(Exception):
    """Base of every error the workflow raises on purpose."""

    default_fix: str = (
        "read the message: it names what failed; `deploybench diagnose --log FILE` names a catalogued failure"
    )
    """What to do when the raiser named no fix of its own (every class has one: the CLI never prints none)."""

    retryable: bool = False

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


# --- retryable -----------------------------------------------------------------------------


class AwsThrottled(RetryableError):
    """An AWS API answered ThrottlingException / TooManyRequests."""

    default_fix = "try again later, or lower the request rate (benchmark.concurrency)"


class AwsServiceUnavailable(RetryableError):
    """An AWS API answered 5xx (InternalFailure, ServiceUnavailable)."""

    default_fix = "try again later; if it persists, check the AWS Health Dashboard for the region"


class ResourceBusy(RetryableError):
    """A resource is changing state (e.g. deleting an endpoint that is still Creating)."""

    default_fix = "wait until the resource leaves its changing state, then try again"


# --- terminal: input -----------------------------------------------------------------------


class SpecInvalid(TerminalError):
    """The run specification does not validate."""

    default_fix = (
        "correct the field the message names; `deploybench schema` lists every field and what it accepts"
    )


class ModelSourceInvalid(TerminalError):
    """The model source is not a usable Hugging Face model folder."""

    default_fix = (
        "point model.source at 'bundled', a model folder, s3://bucket/prefix/, hf://org/name or org/name"
    )


class HubUnreachable(TerminalError):
    """The Hugging Face Hub could not be reached (network, proxy, HF_ENDPOINT, or HF_HUB_OFFLINE set):
    the spec may be fine; the work could not start."""

    default_fix = (
        "check the network and HF_ENDPOINT (unset it for huggingface.co); unset HF_HUB_OFFLINE, or download the "
        "model (`hf download org/name --local-dir DIR`) and pass its folder"
    )


class UnsupportedArchitecture(TerminalError):
    """The model's architecture has no export route."""

    default_fix = "pick a model of a supported encoder family (`deploybench schema`, model.source)"


# --- terminal: build -----------------------------------------------------------------------


class ConversionFailed(TerminalError):
    """Export to ONNX failed."""

    default_fix = (
        "check the model loads with transformers (AutoModel.from_pretrained), or try convert.optimize: none"
    )


class ParityCheckFailed(TerminalError):
    """The ONNX model's outputs differ from PyTorch beyond tolerance."""

    default_fix = "try convert.optimize: none, or convert.precision: fp32"


class QuantizationCollapsed(TerminalError):
    """INT8 predictions collapsed against fp32 (F29)."""

    default_fix = "convert with convert.precision: fp32 (F29)"


class OutputNotWritable(TerminalError):
    """The artifact folder or tarball cannot be written where asked."""

    default_fix = "pass an --out folder that is empty (or new) and writable"


class ArtifactIncomplete(TerminalError):
    """A file the manifest names is missing, truncated or does not load (F22)."""

    default_fix = "convert the model again (`deploybench convert`) and pack the new folder (F22)"


class RequirementsInvalid(TerminalError):
    """A line of code/requirements.txt that pip could not read (the container would fail at start)."""

    default_fix = "correct the line of code/requirements.txt the message names (pip's requirement syntax)"


class PreflightBlocked(TerminalError):
    """A static check found a failure that would happen on AWS."""

    default_fix = "apply each blocking finding's fix (`deploybench preflight SPEC`), then run again"


# --- terminal: deploy ----------------------------------------------------------------------


class DeployRejected(TerminalError):
    """SageMaker rejected a create call (ValidationException and the like)."""

    default_fix = "correct the field the message names; `deploybench preflight SPEC` checks it offline"


class AwsAccessDenied(TerminalError):
    """An AWS call was denied (AccessDenied): by the role's policies, a permissions boundary, or an
    organization's service control policy (F38); the message names the action and what is missing."""

    default_fix = (
        "grant the action the message names, or set the spec field that meets the policy's condition (F38)"
    )


class EndpointFailed(TerminalError):
    """The endpoint reached Failed."""

    default_fix = "read the endpoint's FailureReason and logs: `deploybench diagnose --endpoint NAME`"


class CapacityStall(TerminalError):
    """Creating with no instance ever assigned, past the stall threshold (F06)."""

    default_fix = "add a fallback to hosting.instance_type_fallbacks, or try another region (F06)"


class EndpointWaitTimeout(TerminalError):
    """The endpoint did not reach InService within the wait budget."""

    default_fix = "raise wait.timeout_min, or `deploybench diagnose --endpoint NAME` to see why it is slow"


class InferenceComponentFailed(TerminalError):
    """An inference component reached Failed, or is InService with fewer copies than desired (F09)."""

    default_fix = "check that the copies fit the instances: `deploybench diagnose --endpoint NAME` (F09)"


class ServedModelMismatch(TerminalError):
    """The endpoint serves another model than the one requested (vLLM's default model, F26)."""

    default_fix = (
        "serve the model the run packed: `deploybench diagnose --endpoint NAME` names the mismatch (F26)"
    )


class NotServableLocally(TerminalError):
    """The hosting mode needs what the local engine does not have (Docker, a GPU, the engine's image)."""

    default_fix = (
        "run without --local on AWS, or pick a hosting mode the local engine serves (realtime, serverless)"
    )


# --- terminal: serve and measure -----------------------------------------------------------


class InvocationFailed(TerminalError):
    """The endpoint answered an invocation with an error."""

    default_fix = "read the endpoint's logs (deploybench-results/<run id>/engine/endpoint-logs/ locally, CloudWatch on AWS)"


class WarmupFailed(TerminalError):
    """A shape never produced a successful, stable invocation during warmup."""

    default_fix = "read the endpoint's logs; lower benchmark.sequence_lengths or batch sizes if the model runs out of memory"


class BenchmarkFailed(TerminalError):
    """The measurement could not be completed."""

    default_fix = "read the run's logs; lower benchmark.concurrency or duration and run again"


class BenchmarkJobFailed(TerminalError):
    """The benchmark processing job failed, was stopped, or ran past its time."""

    default_fix = "read the processing job's logs (CloudWatch /aws/sagemaker/ProcessingJobs), or set benchmark.runner: lambda"


class ResultInvalid(TerminalError):
    """A result file cannot be read, or its schema version is unknown."""

    default_fix = "pass a result.json a run of this version wrote (deploybench-results/<run id>/result.json)"


class CatalogueInvalid(TerminalError):
    """A user's failure catalogue file (``--catalogue``, ``catalogue.d/``) does not validate."""

    default_fix = (
        "correct the named field of the named file (the schema is the packaged catalogue's: "
        "`deploybench catalogue F06 --json` shows an entry), or move the file out of catalogue.d/"
    )


# --- terminal: teardown --------------------------------------------------------------------


class TeardownIncomplete(TerminalError):
    """Resources tagged for the run still exist after teardown."""

    default_fix = "run `deploybench janitor --dry-run`, then `deploybench janitor` to delete what is left"


# --- terminal: orchestration (sweeps, redeploys) -------------------------------------------


class ChildExecutionFailed(TerminalError):
    """A child execution (a sweep item, a redeploy) ended other than SUCCEEDED.

    On AWS a ``startExecution.sync:2`` task fails with ``States.TaskFailed``; the local engine's
    stand-in raises this instead. Both go to the same ``States.ALL`` catcher.
    """

    default_fix = "open the child execution the message names (its console URL) for its own error"


class SweepRunsFailed(TerminalError):
    """At least one run of a benchmark sweep failed; the report lists which and why."""

    default_fix = "read the sweep report: it lists each failed run and its diagnosis"


class PerformanceRegression(TerminalError):
    """A sweep measured worse than its baseline beyond the sweep's thresholds."""

    default_fix = "compare the sweep report with its baseline; accept the new figures or fix the regression"


# --- terminal: the command line and its AWS set-up (exit 2; never raised inside an execution) ---


class UsageError(TerminalError):
    """A flag, argument or option value the command does not take."""

    default_fix = "see `deploybench COMMAND -h` for what the command takes"


class NoCredentials(TerminalError):
    """No usable AWS credentials were found."""

    default_fix = (
        "run `aws configure`, or `aws sso login --profile NAME` and pass --profile NAME (or set AWS_PROFILE)"
    )


class ExpiredToken(TerminalError):
    """The AWS credentials or SSO session have expired."""

    default_fix = "run `aws sso login` (or refresh the credentials) and try again"


class InvalidCredentials(TerminalError):
    """AWS refused the credentials (a wrong key, a deleted user)."""

    default_fix = "run `aws configure` with a valid key, or `aws sso login --profile NAME`"


class ProfileNotFound(TerminalError):
    """The AWS profile named by --profile or AWS_PROFILE is not in ~/.aws/config."""

    default_fix = (
        "pass --profile with a profile of ~/.aws/config (`aws configure list-profiles`) or unset AWS_PROFILE"
    )


class NoRegion(TerminalError):
    """No AWS region is set."""

    default_fix = "pass --region (e.g. --region eu-west-1), set AWS_REGION, or set a region in the profile"


class StackNotFound(TerminalError):
    """The deployed deploybench stack is not in the region."""

    default_fix = (
        "deploy it (`npx aws-cdk@2 deploy`, README 'AWS quick start'), or pass --stack-name / --region"
    )


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
    return [cls for cls in _leaves(DeploybenchError) if cls not in (RetryableError, TerminalError)]
