"""The names an ``ErrorEquals`` (or a diagnosis rule) may hold: every class of ``workflows.errors`` by
name, split as the definitions use them (retried or caught), and the names the runtimes raise themselves.

A class name of ``workflows.errors`` *is* the Step Functions error name; these lists are read from its
classes, never written out again.
"""

from __future__ import annotations

from workflows.errors import all_errors


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
