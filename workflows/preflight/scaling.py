"""Scale to zero: every piece present (F11) and the alarm that brings copies back (F12)."""

from __future__ import annotations

from typing import Any

from workflows.contracts import Finding

# The field's working alarm on NoCapacityInvocationFailures (requests at zero copies fail at once).
NO_CAPACITY_ALARM: dict[str, Any] = {
    "MetricName": "NoCapacityInvocationFailures",
    "Namespace": "AWS/SageMaker",
    "Period": 30,
    "EvaluationPeriods": 1,
    "Threshold": 1,
    "ComparisonOperator": "GreaterThanOrEqualToThreshold",
    "TreatMissingData": "missing",
}


def check_scale_to_zero(
    *,
    min_instance_count: int,
    scalable_target_min_capacity: int | None,
    has_scaling_policy: bool,
) -> list[Finding]:
    """F11: ``MinInstanceCount: 0`` alone never scales in; the component's DesiredCopyCount must be an
    Application Auto Scaling target with MinCapacity=0, with a scaling policy.

    Args:
        min_instance_count: ManagedInstanceScaling.MinInstanceCount of the variant.
        scalable_target_min_capacity: MinCapacity of the target on
            ``sagemaker:inference-component:DesiredCopyCount``; None when no target is registered.
        has_scaling_policy: a policy (target tracking) is attached to that target.
    """
    if min_instance_count != 0:
        return []
    missing = []
    if scalable_target_min_capacity is None:
        missing.append("no scalable target on sagemaker:inference-component:DesiredCopyCount")
    elif scalable_target_min_capacity != 0:
        missing.append(f"the scalable target's MinCapacity is {scalable_target_min_capacity}, not 0")
    if not has_scaling_policy:
        missing.append("no scaling policy on the target")
    if not missing:
        return []
    return [
        Finding(
            id="F11",
            severity="blocking",
            message="MinInstanceCount is 0 but the instances would never go: " + "; ".join(missing) + ".",
            fix="register the component's DesiredCopyCount with Application Auto Scaling (MinCapacity=0) and "
            "attach a target-tracking policy",
            evidence="; ".join(missing),
        )
    ]


def check_no_capacity_alarm(*, alarm: dict[str, Any] | None, action_policy_type: str | None) -> list[Finding]:
    """F12: at zero copies requests fail at once; an alarm on NoCapacityInvocationFailures must fire a
    step-scaling policy, or the component never comes back.

    Args:
        alarm: the PutMetricAlarm parameters, or None when there is no alarm.
        action_policy_type: PolicyType of the policy its AlarmActions name (StepScaling expected).
    """
    if alarm is None:
        return [
            Finding(
                id="F12",
                severity="blocking",
                message="scale to zero without a NoCapacityInvocationFailures alarm: at zero copies every "
                "request fails with 'Inference Component has no capacity' and nothing scales out.",
                fix="add the alarm (Period 30, EvaluationPeriods 1, Threshold 1, "
                "GreaterThanOrEqualToThreshold, TreatMissingData missing) with a StepScaling policy as action",
                evidence="no alarm",
            )
        ]
    wrong = [
        f"{key}={alarm.get(key)!r} (expected {value!r})"
        for key, value in NO_CAPACITY_ALARM.items()
        if alarm.get(key) != value
    ]
    if not alarm.get("AlarmActions"):
        wrong.append("no AlarmActions")
    if action_policy_type != "StepScaling":
        wrong.append(f"the action's policy is {action_policy_type or 'missing'}, not StepScaling")
    if not wrong:
        return []
    return [
        Finding(
            id="F12",
            severity="blocking",
            message="the NoCapacityInvocationFailures alarm would not bring copies back from zero: "
            + "; ".join(wrong)
            + ".",
            fix="use the field's alarm: "
            + ", ".join(f"{k}={v}" for k, v in NO_CAPACITY_ALARM.items())
            + ", action: a StepScaling policy",
            evidence="; ".join(wrong),
        )
    ]
