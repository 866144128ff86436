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

    retryable: bool = False

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        self.message = message
        self.fix = fix
        super().__init__(f"{message} Fix: {fix}" if fix else message)


class RetryableError(DeploybenchError):
    """Transient: the same call is expected to succeed later."""

    retryable = True


class TerminalError(DeploybenchError):
    """Permanent for this input: retrying the same call cannot help."""


# --- retryable -----------------------------------------------------------------------------


class AwsThrottled(RetryableError):
    """An AWS API answered ThrottlingException / TooManyRequests."""


class AwsServiceUnavailable(RetryableError):
    """An AWS API answered 5xx (InternalFailure, ServiceUnavailable)."""


class ResourceBusy(RetryableError):
    """A resource is changing state (e.g. deleting an endpoint that is still Creating)."""


# --- terminal: input -----------------------------------------------------------------------


class SpecInvalid(TerminalError):
    """The run specification does not validate."""


class ModelSourceInvalid(TerminalError):
    """The model source is not a usable Hugging Face model folder."""


class UnsupportedArchitecture(TerminalError):
    """The model's architecture has no export route."""


# --- terminal: build -----------------------------------------------------------------------


class ConversionFailed(TerminalError):
    """Export to ONNX failed."""


class ParityCheckFailed(TerminalError):
    """The ONNX model's outputs differ from PyTorch beyond tolerance."""


class QuantizationCollapsed(TerminalError):
    """INT8 predictions collapsed against fp32 (F29)."""


class OutputNotWritable(TerminalError):
    """The artifact folder or tarball cannot be written where asked."""


class ArtifactIncomplete(TerminalError):
    """A file the manifest names is missing, truncated or does not load (F22)."""


class RequirementsInvalid(TerminalError):
    """A line of code/requirements.txt that pip could not read (the container would fail at start)."""


class PreflightBlocked(TerminalError):
    """A static check found a failure that would happen on AWS."""


# --- terminal: deploy ----------------------------------------------------------------------


class DeployRejected(TerminalError):
    """SageMaker rejected a create call (ValidationException and the like)."""


class AwsAccessDenied(TerminalError):
    """An AWS call was denied (AccessDenied): by the role's policies, a permissions boundary, or an
    organization's service control policy (F38); the message names the action and what is missing."""


class EndpointFailed(TerminalError):
    """The endpoint reached Failed."""


class CapacityStall(TerminalError):
    """Creating with no instance ever assigned, past the stall threshold (F06)."""


class EndpointWaitTimeout(TerminalError):
    """The endpoint did not reach InService within the wait budget."""


class InferenceComponentFailed(TerminalError):
    """An inference component reached Failed, or is InService with fewer copies than desired (F09)."""


class ServedModelMismatch(TerminalError):
    """The endpoint serves another model than the one requested (vLLM's default model, F26)."""


class NotServableLocally(TerminalError):
    """The hosting mode needs what the local engine does not have (Docker, a GPU, the engine's image)."""


# --- terminal: serve and measure -----------------------------------------------------------


class InvocationFailed(TerminalError):
    """The endpoint answered an invocation with an error."""


class WarmupFailed(TerminalError):
    """A shape never produced a successful, stable invocation during warmup."""


class BenchmarkFailed(TerminalError):
    """The measurement could not be completed."""


class BenchmarkJobFailed(TerminalError):
    """The benchmark processing job failed, was stopped, or ran past its time."""


class ResultInvalid(TerminalError):
    """A result file cannot be read, or its schema version is unknown."""


# --- terminal: teardown --------------------------------------------------------------------


class TeardownIncomplete(TerminalError):
    """Resources tagged for the run still exist after teardown."""


# --- terminal: orchestration (sweeps, redeploys) -------------------------------------------


class ChildExecutionFailed(TerminalError):
    """A child execution (a sweep item, a redeploy) ended other than SUCCEEDED.

    On AWS a ``startExecution.sync:2`` task fails with ``States.TaskFailed``; the local engine's
    stand-in raises this instead. Both go to the same ``States.ALL`` catcher.
    """


class SweepRunsFailed(TerminalError):
    """At least one run of a benchmark sweep failed; the report lists which and why."""


class PerformanceRegression(TerminalError):
    """A sweep measured worse than its baseline beyond the sweep's thresholds."""


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
        """What the run tore down and where its partial results are (``workflows.runner.Interruption``)."""
        super().__init__(self.signal_name)


def _leaves(base: type[DeploybenchError]) -> list[type[DeploybenchError]]:
    found: list[type[DeploybenchError]] = []
    for cls in base.__subclasses__():
        found.append(cls)
        found.extend(_leaves(cls))
    return found


def all_errors() -> list[type[DeploybenchError]]:
    """Every concrete error class, in definition order."""
    return [cls for cls in _leaves(DeploybenchError) if cls not in (RetryableError, TerminalError)]


def retryable_names() -> list[str]:
    """Step Functions error names that the definitions retry."""
    return [cls.__name__ for cls in all_errors() if cls.retryable]


def terminal_names() -> list[str]:
    """Step Functions error names that go to the catch path."""
    return [cls.__name__ for cls in all_errors() if not cls.retryable]


def error_names() -> set[str]:
    """All names, for checking ``ErrorEquals`` lists."""
    return {cls.__name__ for cls in all_errors()}


# Names the runtimes raise themselves, not a class here: the Amazon States Language's predefined
# errors (its spec, appendix A, and the Step Functions developer guide's "Error names"), Lambda's
# service exceptions as a Task reports them, and Lambda's timeout as its invocation names it.
RUNTIME_ERROR_NAMES = frozenset(
    {
        "States.ALL",
        "States.BranchFailed",
        "States.DataLimitExceeded",
        "States.ExceedToleratedFailureThreshold",
        "States.HeartbeatTimeout",
        "States.Http.Socket",
        "States.IntrinsicFailure",
        "States.ItemReaderFailed",
        "States.NoChoiceMatched",
        "States.ParameterPathFailure",
        "States.Permissions",
        "States.QueryEvaluationError",
        "States.ResultPathMatchFailure",
        "States.ResultWriterFailed",
        "States.Runtime",
        "States.TaskFailed",
        "States.Timeout",
        "Lambda.AWSLambdaException",
        "Lambda.ClientExecutionTimeoutException",
        "Lambda.ServiceException",
        "Lambda.SdkClientException",
        "Lambda.TooManyRequestsException",
        "Lambda.Unknown",
        "Sandbox.Timedout",
    }
)


def is_error_name(name: str) -> bool:
    """Whether ``name`` is an error a failed execution can carry: a class here, or a runtime's own."""
    return name in error_names() or name in RUNTIME_ERROR_NAMES
