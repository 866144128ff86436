"""Everything a run may have created, found by the run's name prefix, whatever step created it.

Kinds, in the order teardown deletes them (each depends on the ones after it): Application Auto
Scaling targets (deregistering one deletes its policies), the no-capacity alarms, inference
components, endpoints, endpoint configs, models. Names all start with ``db-<run id>``; scaling
targets are named by their ``inference-component/<name>`` resource id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from workflows.aws import aws_errors, is_busy, is_not_found, paginate, translate
from workflows.hosting.scale_to_zero import DIMENSION, NAMESPACE

if TYPE_CHECKING:
    from types_boto3_application_autoscaling import ApplicationAutoScalingClient
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_sagemaker import SageMakerClient

GONE = {"Deleting"}
IC_RESOURCE = "inference-component/"


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


def named(
    sagemaker: SageMakerClient, operation: str, key: str, name_key: str, prefix: str
) -> dict[str, dict[str, Any]]:
    """Items of a SageMaker list call whose name starts with ``prefix``."""
    with aws_errors(operation):
        items = paginate(sagemaker, operation, key, NameContains=prefix)
    return {item[name_key]: item for item in items if item[name_key].startswith(prefix)}


def components(sagemaker: SageMakerClient, prefix: str) -> dict[str, dict[str, Any]]:
    return named(
        sagemaker, "list_inference_components", "InferenceComponents", "InferenceComponentName", prefix
    )


def scaling_targets(autoscaling: ApplicationAutoScalingClient, prefix: str) -> list[str]:
    """Resource ids of the run's components registered with Application Auto Scaling."""
    with aws_errors("describe scalable targets"):
        targets = paginate(
            autoscaling,
            "describe_scalable_targets",
            "ScalableTargets",
            ServiceNamespace=NAMESPACE,
            ScalableDimension=DIMENSION,
        )
    return sorted(t["ResourceId"] for t in targets if t["ResourceId"].startswith(IC_RESOURCE + prefix))


def scaling_policies(autoscaling: ApplicationAutoScalingClient, resource_id: str) -> list[str]:
    with aws_errors(f"describe scaling policies of {resource_id}"):
        policies = paginate(
            autoscaling,
            "describe_scaling_policies",
            "ScalingPolicies",
            ServiceNamespace=NAMESPACE,
            ResourceId=resource_id,
            ScalableDimension=DIMENSION,
        )
    return sorted(p["PolicyName"] for p in policies)


def alarms(cloudwatch: CloudWatchClient, prefix: str) -> list[str]:
    with aws_errors("describe alarms"):
        found = paginate(cloudwatch, "describe_alarms", "MetricAlarms", AlarmNamePrefix=prefix)
    return sorted(a["AlarmName"] for a in found)


def delete_scaling(sweep: Sweep, autoscaling: ApplicationAutoScalingClient, prefix: str, keep: Any) -> None:
    """Policies, then the targets they scale (deregistering alone would remove them too)."""
    for resource_id in scaling_targets(autoscaling, prefix):
        if keep(resource_id.removeprefix(IC_RESOURCE)):
            continue
        for policy in scaling_policies(autoscaling, resource_id):
            sweep.delete(
                autoscaling.delete_scaling_policy,
                f"scaling-policy/{policy}",
                f"delete scaling policy {policy}",
                PolicyName=policy,
                ServiceNamespace=NAMESPACE,
                ResourceId=resource_id,
                ScalableDimension=DIMENSION,
            )
        sweep.delete(
            autoscaling.deregister_scalable_target,
            f"scalable-target/{resource_id}",
            f"deregister {resource_id}",
            ServiceNamespace=NAMESPACE,
            ResourceId=resource_id,
            ScalableDimension=DIMENSION,
        )


def delete_alarms(sweep: Sweep, cloudwatch: CloudWatchClient, prefix: str, keep: Any) -> None:
    names = [name for name in alarms(cloudwatch, prefix) if not keep(name)]
    for start in range(0, len(names), 100):  # DeleteAlarms takes at most 100 names
        batch = names[start : start + 100]
        with aws_errors("delete alarms"):
            cloudwatch.delete_alarms(AlarmNames=batch)
        sweep.deleted += [f"alarm/{name}" for name in batch]


def delete_components(sweep: Sweep, sagemaker: SageMakerClient, prefix: str, keep: Any) -> set[str]:
    """Delete the run's components; returns the endpoints that still carry one afterwards.

    AWS deletes a component asynchronously (it lists as Deleting for a while) and an endpoint
    cannot go before its components: such an endpoint waits for the next pass.
    """
    for name, item in components(sagemaker, prefix).items():
        if keep(name) or item.get("InferenceComponentStatus") in GONE:
            continue
        sweep.delete(
            sagemaker.delete_inference_component,
            f"inference-component/{name}",
            f"delete inference component {name}",
            InferenceComponentName=name,
        )
    return {item["EndpointName"] for name, item in components(sagemaker, prefix).items() if not keep(name)}
