"""What scale to zero may do (F11, F12), and what the janitor may do with its leftovers.

Deploy registers each inference component's DesiredCopyCount as a scalable target with its policies,
and the no-capacity alarm that fires the step-scaling policy; teardown and the janitor remove them
(``workflows/janitor/scaling.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import aws_iam as iam

from infra.constants import PREFIX, TAG_MANAGED
from infra.ownership import statement
from workflows.hosting.scale_to_zero import resource_id

if TYPE_CHECKING:
    from infra.permissions import Scope

# Scale to zero (F11, F12): each inference component's DesiredCopyCount as a scalable target with
# its policies, and the NoCapacityInvocationFailures alarm that fires the step-scaling policy.
AUTOSCALING_DESCRIBE = [
    "application-autoscaling:DescribeScalableTargets",
    "application-autoscaling:DescribeScalingPolicies",
]
AUTOSCALING_MANAGE = [
    "application-autoscaling:RegisterScalableTarget",
    "application-autoscaling:DeregisterScalableTarget",
    "application-autoscaling:PutScalingPolicy",
    "application-autoscaling:DeleteScalingPolicy",
]
IC_SCALABLE_DIMENSION = "sagemaker:inference-component:DesiredCopyCount"
# Registering a SageMaker scalable target creates this service-linked role the first time.
AUTOSCALING_SERVICE = "sagemaker.application-autoscaling.amazonaws.com"
AUTOSCALING_ROLE = (
    f"aws-service-role/{AUTOSCALING_SERVICE}/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint"
)
# Application Auto Scaling names a target-tracking policy's alarms after the scalable resource
# (TargetTracking-inference-component/<component>-AlarmHigh-<uuid>, ...-AlarmLow-<uuid>), and it
# creates, describes and deletes them with the permissions of whoever puts or deletes the policy.
TARGET_TRACKING_ALARMS = f"TargetTracking-{resource_id(f'{PREFIX}-*')}"
RUN_ALARMS = f"{PREFIX}-*"


def scale_to_zero(scope: Scope) -> list[iam.PolicyStatement]:
    """Deploy registers components' copies for scaling and the no-capacity alarm; teardown removes them."""
    return [
        statement(AUTOSCALING_DESCRIBE, ["*"]),
        statement(
            AUTOSCALING_MANAGE,
            [scope.scalable_targets()],
            StringEquals={
                "application-autoscaling:service-namespace": "sagemaker",
                "application-autoscaling:scalable-dimension": IC_SCALABLE_DIMENSION,
            },
        ),
        # The alarms are the run's (db-<run id>-...) and those Application Auto Scaling makes for the
        # components' target tracking; the only action of either is a scaling policy.
        statement(["cloudwatch:DescribeAlarms"], scope.alarms()),
        *alarm_deletes(scope),
        # Tagging is the run's alarm's create-time tagging (PutMetricAlarm with Tags), always managed.
        statement(
            ["cloudwatch:TagResource"],
            scope.alarms((RUN_ALARMS,)),
            StringEquals={f"aws:RequestTag/{TAG_MANAGED}": "true"},
        ),
        statement(
            ["cloudwatch:PutMetricAlarm"],
            scope.alarms(),
            **{"ForAllValues:StringLike": {"cloudwatch:AlarmActions": [scope.scaling_policies()]}},
        ),
        statement(
            ["iam:CreateServiceLinkedRole"],
            [scope.autoscaling_role()],
            StringEquals={"iam:AWSServiceName": AUTOSCALING_SERVICE},
        ),
    ]


# --- Janitor: scale to zero's leftovers (workflows/janitor/scaling.py) -------------------------
# It describes and deletes only: each target's component is described for its tags, and the alarms
# are the run's own (db-*) and those Application Auto Scaling made for a db-* component's policy.
JANITOR_SCALING_DELETE = [
    "application-autoscaling:DeleteScalingPolicy",
    "application-autoscaling:DeregisterScalableTarget",
]
JANITOR_ALARMS = ["cloudwatch:DescribeAlarms", "cloudwatch:ListTagsForResource"]


def alarm_deletes(scope: Scope) -> list[iam.PolicyStatement]:
    """Application Auto Scaling's alarms carry no tags (their names tie them to a db-* component); the
    run's own db-* alarms are put with the run's tags, so only those tagged deploybench's may go."""
    return [
        statement(["cloudwatch:DeleteAlarms"], scope.alarms((TARGET_TRACKING_ALARMS,))),
        statement(
            ["cloudwatch:DeleteAlarms"],
            scope.alarms((RUN_ALARMS,)),
            StringEquals={f"aws:ResourceTag/{TAG_MANAGED}": "true"},
        ),
    ]


def janitor_scaling(scope: Scope) -> list[iam.PolicyStatement]:
    return [
        statement(AUTOSCALING_DESCRIBE, ["*"]),
        statement(
            JANITOR_SCALING_DELETE,
            [scope.scalable_targets()],
            StringEquals={
                "application-autoscaling:service-namespace": "sagemaker",
                "application-autoscaling:scalable-dimension": IC_SCALABLE_DIMENSION,
            },
        ),
        statement(JANITOR_ALARMS, scope.alarms()),
        *alarm_deletes(scope),
        statement(["sagemaker:DescribeInferenceComponent"], scope.sagemaker_arns(("inference-component",))),
    ]
