"""Every kind of resource a run may create, in one table: how to find, describe, delete and verify it.

``KINDS`` is the table, in the order teardown deletes (each kind depends on the ones after it):
Application Auto Scaling targets (deregistering one deletes its policies), the no-capacity alarms,
inference components, endpoints, endpoint configs, models, then the staging folder. A run's
resources are found by the run's name prefix (``db-<run id>-``) whatever step created them;
scaling targets are named by their ``inference-component/<name>`` resource id. Teardown, the
janitor (by expiry tag), failed-attempt removal, the tag query's last check and kept-resource
tagging all read the table; ``tests/handlers/test_resource_kinds.py`` checks every operation and key of it
against botocore's service models.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from workflows.aws.clients import aws_errors, is_busy, is_not_found, paginate, translate
from workflows.hosting.scale_to_zero import DIMENSION, NAMESPACE

if TYPE_CHECKING:
    from types_boto3_application_autoscaling import ApplicationAutoScalingClient
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_sagemaker import SageMakerClient

GONE = {"Deleting"}
IC_RESOURCE = "inference-component/"


@dataclass(frozen=True)
class ResourceKind:
    """One kind of resource: its label, its API's calls and keys, and who sweeps it.

    Attributes:
        name: the label's kind, ``<name>/<resource name>`` in every report (``endpoint-config``).
        service: the botocore service whose client handles it.
        found_by: how a run's or an expired one is found, in words (the report's and a reader's).
        list_operation: the call that lists them (paginated); ``list_key`` holds the items.
        name_key: the item's name field, which is also the name parameter of describe and delete.
        arn_key: the item's (and Describe's) ARN field, for its tags.
        status_key: the item's status field, where it has one.
        describe_operation: the call that describes one by name (verification, ARN).
        delete_operation: the call that removes one (``stop_...`` for a job: it cannot be deleted).
        list_filters: fixed arguments of the list call (only running jobs cost anything; scaling
            kinds are listed in the components' namespace and dimension).
        prefix_parameter: the list call's argument that narrows it to a name prefix, where it has one.
        going: statuses that mean it is already on its way out (nothing to do, nothing left).
        teardown: teardown deletes it and verifies it is gone.
        janitor: the janitor removes it once expired (by its own tags, or its component's).
        tagged: the run-id tag query's last check looks for it under another name.
    """

    name: str
    service: str
    found_by: str
    list_operation: str
    list_key: str
    name_key: str
    arn_key: str | None
    delete_operation: str
    describe_operation: str | None = None
    status_key: str | None = None
    list_filters: tuple[tuple[str, str], ...] = ()
    prefix_parameter: str | None = None
    going: frozenset[str] = frozenset()
    teardown: bool = True
    janitor: bool = True
    tagged: bool = False

    @property
    def title(self) -> str:
        """The kind in words: ``endpoint config``."""
        return self.name.replace("-", " ")

    @property
    def stops(self) -> bool:
        """Removed by stopping it (a processing job), not by deleting it."""
        return self.delete_operation.startswith("stop_")

    def label(self, name: str) -> str:
        return f"{self.name}/{name}"

    def is_going(self, item: dict[str, Any]) -> bool:
        """Whether a listed or described item is already being deleted or stopped."""
        return self.status_key is not None and item.get(self.status_key) in self.going


def _sagemaker(name: str, resource: str, *, status: bool = False, **options: Any) -> ResourceKind:
    """A SageMaker kind: ``List<Resource>s``, ``Describe<Resource>``, ``Delete<Resource>`` by ``<Resource>Name``."""
    snake = name.replace("-", "_")
    return ResourceKind(
        name=name,
        service="sagemaker",
        found_by=options.pop("found_by", "name prefix db-<run id>- (NameContains), tags for expiry"),
        list_operation=f"list_{snake}s",
        prefix_parameter="NameContains",
        list_key=options.pop("list_key", f"{resource}s"),
        name_key=f"{resource}Name",
        arn_key=f"{resource}Arn",
        status_key=f"{resource}Status" if status else None,
        describe_operation=f"describe_{snake}",
        delete_operation=options.pop("delete_operation", f"delete_{snake}"),
        going=frozenset(options.pop("going", GONE if status else ())),
        **options,
    )


def _autoscaling(
    name: str, list_key: str, name_key: str, arn_key: str, delete: str, found_by: str
) -> ResourceKind:
    """An Application Auto Scaling kind, ``Describe<list_key>`` in the components' namespace and dimension."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in list_key)
    return ResourceKind(
        name=name,
        service="application-autoscaling",
        found_by=found_by,
        list_operation=f"describe{snake}",
        list_key=list_key,
        name_key=name_key,
        arn_key=arn_key,
        delete_operation=delete,
        list_filters=(("ServiceNamespace", NAMESPACE), ("ScalableDimension", DIMENSION)),
    )


SCALABLE_TARGET = _autoscaling(
    "scalable-target",
    "ScalableTargets",
    "ResourceId",
    "ScalableTargetARN",
    "deregister_scalable_target",
    found_by="resource id inference-component/db-<run id>-; expires with its component",
)
# Deleted before its target (deregistering would remove it too); never listed on its own.
SCALING_POLICY = _autoscaling(
    "scaling-policy",
    "ScalingPolicies",
    "PolicyName",
    "PolicyARN",
    "delete_scaling_policy",
    found_by="the policies of each scalable target",
)
ALARM = ResourceKind(
    name="alarm",
    service="cloudwatch",
    found_by="name prefix db-<run id>- (AlarmNamePrefix); target tracking's by its component",
    list_operation="describe_alarms",
    list_key="MetricAlarms",
    name_key="AlarmName",
    arn_key="AlarmArn",
    delete_operation="delete_alarms",
    describe_operation="describe_alarms",
    prefix_parameter="AlarmNamePrefix",
    tagged=True,
)
INFERENCE_COMPONENT = _sagemaker("inference-component", "InferenceComponent", status=True, tagged=True)
ENDPOINT = _sagemaker("endpoint", "Endpoint", status=True, tagged=True)
ENDPOINT_CONFIG = _sagemaker("endpoint-config", "EndpointConfig", tagged=True)
MODEL = _sagemaker("model", "Model", tagged=True)
# Only running jobs cost anything; a stopped or finished job is history (SageMaker keeps its record
# forever), so teardown and the tag query leave jobs alone and the janitor stops running ones.
PROCESSING_JOB = _sagemaker(
    "processing-job",
    "ProcessingJob",
    status=True,
    list_key="ProcessingJobSummaries",
    delete_operation="stop_processing_job",
    list_filters=(("StatusEquals", "InProgress"),),
    going={"Stopping"},
    teardown=False,
)
STAGING = ResourceKind(
    name="staging",
    service="s3",
    found_by="key prefix staging/<run id>/; the janitor: a folder whose newest object is past the TTL",
    list_operation="list_objects_v2",
    list_key="Contents",
    name_key="Key",
    arn_key=None,
    delete_operation="delete_objects",
)

KINDS: tuple[ResourceKind, ...] = (
    SCALABLE_TARGET,
    SCALING_POLICY,
    ALARM,
    INFERENCE_COMPONENT,
    ENDPOINT,
    ENDPOINT_CONFIG,
    MODEL,
    PROCESSING_JOB,
    STAGING,
)
"""The table, in teardown's order: each kind goes before the ones it depends on."""


def kind(name: str) -> ResourceKind:
    """The row named ``name``.

    Raises:
        KeyError: naming the known kinds.
    """
    for row in KINDS:
        if row.name == name:
            return row
    raise KeyError(f"no resource kind {name!r}; known: {', '.join(k.name for k in KINDS)}")


def sagemaker_kinds(*, teardown: bool | None = None, janitor: bool | None = None) -> tuple[ResourceKind, ...]:
    """The SageMaker rows in the table's order, optionally only those teardown or the janitor sweeps."""
    return tuple(
        k
        for k in KINDS
        if k.service == "sagemaker"
        and (teardown is None or k.teardown == teardown)
        and (janitor is None or k.janitor == janitor)
    )


@dataclass
class Sweep:
    """What one pass deleted, and what could not be deleted yet (still changing state)."""

    deleted: list[str] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)

    def delete(self, call: Any, label: str, description: str, **kwargs: Any) -> bool:
        """True when deleted or already gone; False (and noted busy) while it is changing state."""
        try:
            call(**kwargs)
        except ClientError as error:
            if is_not_found(error):
                return True
            if is_busy(error):
                self.busy.append(label)
                return False
            raise translate(error, description) from error
        self.deleted.append(label)
        return True


def listed(
    client: Any, row: ResourceKind, action: str, prefix: str | None = None, **arguments: Any
) -> list[dict[str, Any]]:
    """Every page of a kind's list call: the row's fixed filters, ``prefix`` where the call takes one.

    Raises:
        WorkflowError: the translated ``ClientError``, naming ``action``.
    """
    if prefix is not None and row.prefix_parameter is not None:
        arguments[row.prefix_parameter] = prefix
    with aws_errors(action):
        return paginate(client, row.list_operation, row.list_key, **dict(row.list_filters), **arguments)


def names(
    client: Any, row: ResourceKind, action: str, prefix: str | None = None, **arguments: Any
) -> list[str]:
    """The sorted names (``row.name_key``) of a kind's listed items; see :func:`listed`."""
    return sorted(item[row.name_key] for item in listed(client, row, action, prefix, **arguments))


def find(sagemaker: Any, row: ResourceKind, prefix: str) -> dict[str, dict[str, Any]]:
    """Listed items of a SageMaker kind whose name starts with ``prefix``, by name."""
    items = listed(sagemaker, row, row.list_operation, prefix)
    return {item[row.name_key]: item for item in items if item[row.name_key].startswith(prefix)}


def components(sagemaker: Any, prefix: str) -> dict[str, dict[str, Any]]:
    return find(sagemaker, INFERENCE_COMPONENT, prefix)


def describe(sagemaker: Any, row: ResourceKind, name: str) -> dict[str, Any]:
    """Describe one SageMaker resource by name (a ClientError when it is not there)."""
    return dict(getattr(sagemaker, str(row.describe_operation))(**{row.name_key: name}))


def arn_of(sagemaker: Any, row: ResourceKind, name: str) -> str:
    """The ARN of one SageMaker resource, from its Describe call."""
    return str(describe(sagemaker, row, name)[str(row.arn_key)])


def delete_call(sagemaker: Any, row: ResourceKind) -> Callable[..., Any]:
    """The client's delete (or stop) call of a kind; it takes ``**{row.name_key: name}``."""
    return getattr(sagemaker, row.delete_operation)


def delete_named(
    sweep: Sweep, sagemaker: Any, row: ResourceKind, prefix: str, keep: Any, holding: set[str] | None = None
) -> None:
    """Delete the run's resources of one SageMaker kind; an endpoint in ``holding`` waits (busy)."""
    for name, item in find(sagemaker, row, prefix).items():
        if keep(name) or row.is_going(item):
            continue
        if holding and name in holding:
            sweep.busy.append(f"{row.label(name)} (its inference components are still being deleted)")
            continue
        sweep.delete(
            delete_call(sagemaker, row), row.label(name), f"delete {row.title} {name}", **{row.name_key: name}
        )


def remaining_named(sagemaker: Any, row: ResourceKind, prefix: str, keep: Any) -> list[str]:
    """Labels of the run's resources of one SageMaker kind that exist, are not going and not kept."""
    return [
        row.label(name)
        for name, item in find(sagemaker, row, prefix).items()
        if not keep(name) and not row.is_going(item)
    ]


def scaling_targets(autoscaling: ApplicationAutoScalingClient, prefix: str) -> list[str]:
    """Resource ids of the run's components registered with Application Auto Scaling."""
    ids = names(autoscaling, SCALABLE_TARGET, "describe scalable targets")
    return [i for i in ids if i.startswith(IC_RESOURCE + prefix)]


def scaling_policies(autoscaling: ApplicationAutoScalingClient, resource_id: str) -> list[str]:
    """Names of the scaling policies of one scalable target."""
    action = f"describe scaling policies of {resource_id}"
    return names(autoscaling, SCALING_POLICY, action, ResourceId=resource_id)


def alarms(cloudwatch: CloudWatchClient, prefix: str) -> list[str]:
    """Names of the alarms whose name starts with ``prefix``."""
    return names(cloudwatch, ALARM, "describe alarms", prefix)


def delete_scaling(sweep: Sweep, autoscaling: ApplicationAutoScalingClient, prefix: str, keep: Any) -> None:
    """Policies, then the targets they scale (deregistering alone would remove them too)."""
    for resource_id in scaling_targets(autoscaling, prefix):
        if keep(resource_id.removeprefix(IC_RESOURCE)):
            continue
        target = {"ServiceNamespace": NAMESPACE, "ResourceId": resource_id, "ScalableDimension": DIMENSION}
        for policy in scaling_policies(autoscaling, resource_id):
            label, action = SCALING_POLICY.label(policy), f"delete scaling policy {policy}"
            sweep.delete(autoscaling.delete_scaling_policy, label, action, PolicyName=policy, **target)
        label, action = SCALABLE_TARGET.label(resource_id), f"deregister {resource_id}"
        sweep.delete(autoscaling.deregister_scalable_target, label, action, **target)


def delete_alarms(sweep: Sweep, cloudwatch: CloudWatchClient, prefix: str, keep: Any) -> None:
    names = [name for name in alarms(cloudwatch, prefix) if not keep(name)]
    for start in range(0, len(names), 100):  # DeleteAlarms takes at most 100 names
        batch = names[start : start + 100]
        with aws_errors("delete alarms"):
            cloudwatch.delete_alarms(AlarmNames=batch)
        sweep.deleted += [ALARM.label(name) for name in batch]


def delete_components(sweep: Sweep, sagemaker: SageMakerClient, prefix: str, keep: Any) -> set[str]:
    """Delete the run's components; returns the endpoints that still carry one afterwards.

    AWS deletes a component asynchronously (it lists as Deleting for a while) and an endpoint
    cannot go before its components: such an endpoint waits for the next pass.
    """
    delete_named(sweep, sagemaker, INFERENCE_COMPONENT, prefix, keep)
    return {item["EndpointName"] for name, item in components(sagemaker, prefix).items() if not keep(name)}
