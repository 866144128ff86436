"""A traced endpoint's traces group, given its retention at deploy (``hosting.tracing.retention_days``).

SageMaker creates ``/aws/sagemaker/Endpoints/<endpoint>/traces`` as it first traces, with no retention, and the
traces hold the users' texts: DeployEndpoint creates the group first, with the run's tags, and sets its
retention either way. Apart from ``workflows.hosting.tracing`` (the spec's side), which must not call AWS.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from workflows.aws.clients import aws_errors, error_code
from workflows.hosting.tracing import TracingSettings
from workflows.naming import endpoint_traces_log_group

if TYPE_CHECKING:
    from types_boto3_logs import CloudWatchLogsClient


def keep_traces(
    logs: CloudWatchLogsClient, hosting: Any, *, endpoint: str, tags: dict[str, str]
) -> str | None:
    """Give a traced endpoint's traces group its retention; returns the group (None when tracing is off).

    SageMaker creates the group as it first traces, with no retention: the group is created here first, with
    the run's tags (one SageMaker already created is kept as it is), and its retention set either way.

    Raises:
        DeployRejected: CloudWatch Logs refused a call (the endpoint exists by then: the run tears it down).
    """
    settings: TracingSettings | None = getattr(hosting, "tracing", None)
    if settings is None:
        return None
    group = endpoint_traces_log_group(endpoint)
    with aws_errors(f"create log group {group}"):
        try:
            logs.create_log_group(logGroupName=group, tags=tags)
        except ClientError as error:
            if error_code(error) != "ResourceAlreadyExistsException":
                raise
    with aws_errors(f"set the retention of {group}"):
        logs.put_retention_policy(logGroupName=group, retentionInDays=settings.retention_days)
    return group
