"""The janitor's share of scale to zero: scalable targets, their policies, and the alarms.

A scale-to-zero run registers each inference component's DesiredCopyCount with Application Auto
Scaling (``inference-component/db-<run id>-a<N>-ic<i>``), puts a target-tracking and a step-scaling
policy on it, and a ``db-...-no-capacity`` alarm that fires the step policy; Application Auto Scaling
adds the target-tracking policy's own alarms (``TargetTracking-inference-component/<component>-
AlarmHigh-<id>`` and ``-AlarmLow-<id>``). Left behind, a target and its policies keep a dead
component's name registered and its alarms keep evaluating (billed per alarm-month), and teardown's
by-name verification of a later run with the same prefix would trip on them.

Targets and policies carry no tags, and the alarms Application Auto Scaling makes carry none: each
follows the component it scales, whose tags say when the run expires. One whose component is gone
has nothing left to scale and goes. The no-capacity alarm carries the run's tags itself.
Policies go before their target, and the target-tracking alarms with their policy (Application Auto
Scaling deletes them): only orphans are left for the alarm sweep.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from workflows.aws.clients import aws_errors, is_not_found, paginate, translate
from workflows.hosting import resources
from workflows.hosting.scale_to_zero import DIMENSION, NAMESPACE
from workflows.janitor.leaks import Action, Leak, act, expiry
from workflows.naming import PREFIX

if TYPE_CHECKING:
    from types_boto3_application_autoscaling import ApplicationAutoScalingClient
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_sagemaker import SageMakerClient

TARGET_TRACKING_PREFIX = "TargetTracking-"
# Application Auto Scaling's names for a target-tracking policy's alarms.
_TRACKING_ALARM = re.compile(
    rf"^{TARGET_TRACKING_PREFIX}{resources.IC_RESOURCE}(?P<component>.+)-Alarm(High|Low)-[0-9a-fA-F-]+$"
)
# Only components named as deploybench names them: another team's "db-..." is never touched.
_OURS = re.compile(rf"^{PREFIX}-.+-a\d+-ic\d+$")


class ComponentExpiry:
    """When each inference component expires, read once per pass (its tags, via DescribeInferenceComponent).

    ``None`` for a component that is not deploybench's to remove (kept, unmanaged, named otherwise);
    ``now`` for one that no longer exists (what scaled it is an orphan).
    """

    def __init__(self, sagemaker: SageMakerClient, *, now: datetime, ttl: timedelta) -> None:
        self.sagemaker, self.now, self.ttl = sagemaker, now, ttl
        self._known: dict[str, datetime | None] = {}

    def __call__(self, component: str) -> datetime | None:
        if not _OURS.match(component):
            return None
        if component not in self._known:
            self._known[component] = self._read(component)
        return self._known[component]

    def _read(self, component: str) -> datetime | None:
        try:
            described = self.sagemaker.describe_inference_component(InferenceComponentName=component)
        except ClientError as error:
            if is_not_found(error):
                return self.now
            raise translate(error, f"describe inference component {component}") from error
        arn = described["InferenceComponentArn"]
        with aws_errors(f"list tags of {arn}"):
            tags = {
                t["Key"]: t["Value"] for t in paginate(self.sagemaker, "list_tags", "Tags", ResourceArn=arn)
            }
        return expiry(tags, described.get("CreationTime"), self.ttl)


def _expired(expires: datetime | None, now: datetime) -> bool:
    return expires is not None and expires <= now


def _removed(
    kind: str, name: str, expires: datetime, *, dry_run: bool, call: Callable[..., Any], **kwargs: Any
) -> list[Leak]:
    """What the janitor did (dry: would do) about one expired scaling resource; nothing when already gone."""
    if dry_run:
        return [Leak(kind=kind, name=name, expired_at=expires, action="would_delete")]
    outcome, detail = act(call, **kwargs)
    if outcome is None:
        return []
    return [Leak(kind=kind, name=name, expired_at=expires, action=outcome, detail=detail)]


def sweep_scaling(
    *,
    autoscaling: ApplicationAutoScalingClient,
    component_expiry: ComponentExpiry,
    now: datetime,
    dry_run: bool,
) -> list[Leak]:
    """Scalable targets of expired or vanished ``db-`` components: their policies, then the target."""
    target = {"ServiceNamespace": NAMESPACE, "ScalableDimension": DIMENSION}
    leaks: list[Leak] = []
    for resource_id in resources.scaling_targets(autoscaling, f"{PREFIX}-"):
        expires = component_expiry(resource_id.removeprefix(resources.IC_RESOURCE))
        if expires is None or not _expired(expires, now):
            continue
        for policy in resources.scaling_policies(autoscaling, resource_id):
            leaks += _removed(
                resources.SCALING_POLICY.name,
                f"{resource_id}/{policy}",
                expires,
                dry_run=dry_run,
                call=autoscaling.delete_scaling_policy,
                PolicyName=policy,
                ResourceId=resource_id,
                **target,
            )
        leaks += _removed(
            resources.SCALABLE_TARGET.name,
            resource_id,
            expires,
            dry_run=dry_run,
            call=autoscaling.deregister_scalable_target,
            ResourceId=resource_id,
            **target,
        )
    return leaks


def _alarm_tags(cloudwatch: CloudWatchClient, arn: str | None) -> dict[str, str]:
    if not arn:
        return {}
    with aws_errors(f"list tags of {arn}"):
        return {
            t["Key"]: t["Value"] for t in cloudwatch.list_tags_for_resource(ResourceARN=arn).get("Tags", [])
        }


def _alarm_expiry(
    alarm: dict[str, Any], *, cloudwatch: CloudWatchClient, component_expiry: ComponentExpiry, ttl: timedelta
) -> datetime | None:
    tracking = _TRACKING_ALARM.match(alarm["AlarmName"])
    if tracking:
        return component_expiry(tracking["component"])
    # The no-capacity alarm is put with the run's tags; an untagged "db-" alarm is not deploybench's.
    return expiry(_alarm_tags(cloudwatch, alarm.get("AlarmArn")), None, ttl)


def sweep_alarms(
    *,
    cloudwatch: CloudWatchClient,
    component_expiry: ComponentExpiry,
    now: datetime,
    ttl: timedelta,
    dry_run: bool,
) -> list[Leak]:
    """``db-`` alarms past their run's expiry, and target-tracking alarms whose component expired or went."""
    prefixes = (f"{PREFIX}-", f"{TARGET_TRACKING_PREFIX}{resources.IC_RESOURCE}{PREFIX}-")
    expired: list[tuple[str, datetime]] = []
    for prefix in prefixes:
        with aws_errors(f"describe alarms {prefix}*"):
            alarms = paginate(cloudwatch, "describe_alarms", "MetricAlarms", AlarmNamePrefix=prefix)
        for alarm in alarms:
            expires = _alarm_expiry(alarm, cloudwatch=cloudwatch, component_expiry=component_expiry, ttl=ttl)
            if expires is not None and _expired(expires, now):
                expired.append((alarm["AlarmName"], expires))
    if dry_run:
        return [
            Leak(kind=resources.ALARM.name, name=n, expired_at=e, action="would_delete") for n, e in expired
        ]
    leaks: list[Leak] = []
    for start in range(0, len(expired), 100):  # DeleteAlarms takes at most 100 names
        batch = expired[start : start + 100]
        outcome, detail = act(cloudwatch.delete_alarms, AlarmNames=[name for name, _ in batch])
        done: Action = outcome or "deleted"  # None: already gone, which is what was wanted
        leaks += [
            Leak(kind=resources.ALARM.name, name=n, expired_at=e, action=done, detail=detail)
            for n, e in batch
        ]
    return leaks
