"""What is tagged for a run, as the Resource Groups Tagging API sees it: teardown's last check.

Teardown finds and verifies a run's resources by name (``db-<run id>-...``): SageMaker and
CloudWatch list calls are consistent right after a delete. The tag query catches the rest, a
resource tagged ``deploybench:run-id=<run id>`` under another name, which the name listings never
see. GetResources returns resources "tagged or previously tagged" and lags behind deletes, so a
name under the run's prefix is left to the listings; anything else is described before it is
reported. Such a resource is reported, not deleted: the project's IAM grants deletes on ``db-*``
names only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from workflows.aws.clients import aws_errors, is_not_found, paginate
from workflows.hosting import resources
from workflows.naming import TAG_RUN_ID

if TYPE_CHECKING:
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_resourcegroupstaggingapi import ResourceGroupsTaggingAPIClient
    from types_boto3_sagemaker import SageMakerClient

# Service-level filters: GetResources accepts any "service[:type]", but a type string AWS does not
# know is an error, and a teardown must not fail on a filter. The kinds are picked out below.
RESOURCE_TYPES = ["sagemaker", "cloudwatch"]
# The kinds teardown deletes (the table's ``tagged`` rows). Processing jobs (the benchmark job) are
# tagged for the run too, but SageMaker keeps a finished job's record forever: it is not a leftover.
KINDS = frozenset(k.name for k in resources.KINDS if k.tagged)


def parse_arn(arn: str) -> tuple[str, str]:
    """``(kind, name)`` of a SageMaker (``.../endpoint/NAME``) or CloudWatch (``...:alarm:NAME``) ARN."""
    resource = arn.split(":", 5)[5]
    separator = "/" if "/" in resource else ":"
    kind, _, name = resource.partition(separator)
    return kind, name


def tagged_arns(tagging: ResourceGroupsTaggingAPIClient, run_id: str) -> list[str]:
    """ARNs of SageMaker and CloudWatch resources that carry the run's id tag."""
    with aws_errors(f"find resources tagged {TAG_RUN_ID}={run_id}"):
        mappings = paginate(
            tagging,
            "get_resources",
            "ResourceTagMappingList",
            TagFilters=[{"Key": TAG_RUN_ID, "Values": [run_id]}],
            ResourceTypeFilters=RESOURCE_TYPES,
        )
    return sorted(m["ResourceARN"] for m in mappings)


def _exists(sagemaker: Any, kind: resources.ResourceKind, name: str) -> bool:
    try:
        found = resources.describe(sagemaker, kind, name)
    except ClientError as error:
        # Anything but "not found" (AccessDenied: the IAM scope is db-* names) cannot tell it is gone.
        return not is_not_found(error)
    return not kind.is_going(found)


def _still_there(
    kind: str, name: str, *, sagemaker: SageMakerClient, cloudwatch: CloudWatchClient | None
) -> bool:
    if kind == resources.ALARM.name:
        if cloudwatch is None:
            return True  # cannot tell: report it rather than pass it over
        try:
            return bool(cloudwatch.describe_alarms(AlarmNames=[name])["MetricAlarms"])
        except ClientError:
            return True
    row = next((k for k in resources.sagemaker_kinds() if k.name == kind and k.tagged), None)
    if row is None:
        return True
    return _exists(sagemaker, row, name)


def tagged_leftovers(
    run_id: str,
    *,
    prefix: str,
    tagging: ResourceGroupsTaggingAPIClient,
    sagemaker: SageMakerClient,
    cloudwatch: CloudWatchClient | None,
    kept: Callable[[str], bool],
) -> list[str]:
    """Resources tagged for the run, named outside ``prefix``, that still exist and are not kept."""
    leftovers = []
    for arn in tagged_arns(tagging, run_id):
        kind, name = parse_arn(arn)
        if kind not in KINDS or name.startswith(prefix) or kept(name):
            continue
        if _still_there(kind, name, sagemaker=sagemaker, cloudwatch=cloudwatch):
            leftovers.append(f"{kind}/{name} (tagged {TAG_RUN_ID}={run_id}, named outside {prefix}*)")
    return leftovers
