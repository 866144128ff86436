"""Scale to zero: inference components whose copies, then instances, go to zero when idle.

``MinInstanceCount: 0`` alone never scales in (F11): each component's DesiredCopyCount is registered
with Application Auto Scaling (MinCapacity 0) and gets a target-tracking policy. At zero copies a
request fails at once ("Inference Component has no capacity to process this request") and never
queues; only a step-scaling policy fired by an alarm on ``NoCapacityInvocationFailures`` brings a
copy back (F12; the field waited 471 s and 95 client retries). Scaling is registered once the
components serve, on the poll that finds them ready; every call is an idempotent put.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workflows import naming
from workflows.aws.clients import aws_errors
from workflows.contracts import DescribeRequest, Finding
from workflows.hosting.base import AwsClients, Progress
from workflows.hosting.components import COMPONENT_CHECKS, ComponentsMode
from workflows.hosting.specs import ScaleToZeroHosting
from workflows.preflight.context import PreflightContext
from workflows.preflight.findings import refuse_blocking
from workflows.preflight.gpu import GPU_RUNTIME, TENSORRT_AFTER_SCALE_OUT
from workflows.preflight.registry import Check
from workflows.preflight.scaling import NO_CAPACITY_ALARM, check_no_capacity_alarm, check_scale_to_zero

if TYPE_CHECKING:
    from types_boto3_application_autoscaling import ApplicationAutoScalingClient
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_sagemaker.type_defs import TagTypeDef

NAMESPACE = "sagemaker"
DIMENSION = "sagemaker:inference-component:DesiredCopyCount"
# Concurrent requests per copy, sampled every 10 s: scale-in waits for 90 low datapoints (15 min) of
# its AlarmLow, which is most of the ~13 min from traffic stop to zero copies (F13).
TRACKED_METRIC = "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution"


def resource_id(component: str) -> str:
    return f"inference-component/{component}"


def target_tracking_name(component: str) -> str:
    return f"{component}-target-tracking"


def step_scaling_name(component: str) -> str:
    return f"{component}-scale-out-from-zero"


def alarm_name(component: str) -> str:
    return f"{component}-no-capacity"


def scaling_plan(hosting: ScaleToZeroHosting, component: str) -> dict[str, dict[str, Any]]:
    """Every Application Auto Scaling and CloudWatch call for one component, as parameters."""
    target = {
        "ServiceNamespace": NAMESPACE,
        "ResourceId": resource_id(component),
        "ScalableDimension": DIMENSION,
    }
    return {
        "register_scalable_target": {**target, "MinCapacity": 0, "MaxCapacity": hosting.max_copies},
        "target_tracking": {
            **target,
            "PolicyName": target_tracking_name(component),
            "PolicyType": "TargetTrackingScaling",
            "TargetTrackingScalingPolicyConfiguration": {
                "PredefinedMetricSpecification": {"PredefinedMetricType": TRACKED_METRIC},
                "TargetValue": hosting.target_concurrent_requests,
                "ScaleInCooldown": hosting.scale_in_cooldown_s,
                "ScaleOutCooldown": hosting.scale_out_cooldown_s,
            },
        },
        "step_scaling": {
            **target,
            "PolicyName": step_scaling_name(component),
            "PolicyType": "StepScaling",
            "StepScalingPolicyConfiguration": {
                "AdjustmentType": "ChangeInCapacity",
                "MetricAggregationType": "Maximum",
                "Cooldown": hosting.scale_out_cooldown_s,
                # Any failure at zero copies (the metric is >= the threshold of 1) adds one copy.
                "StepAdjustments": [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}],
            },
        },
        "alarm": {
            **NO_CAPACITY_ALARM,
            "AlarmName": alarm_name(component),
            "AlarmDescription": f"Scale {component} out from zero copies when requests fail for lack of capacity (F12).",
            "ActionsEnabled": True,
            "Statistic": "Maximum",
            "Dimensions": [{"Name": "InferenceComponentName", "Value": component}],
        },
    }


def plan_findings(hosting: ScaleToZeroHosting, plan: dict[str, dict[str, Any]]) -> list[Finding]:
    """F11 and F12 on the planned calls: the three pieces present, the field's alarm, a step policy."""
    target = plan["register_scalable_target"]
    return check_scale_to_zero(
        min_instance_count=hosting.min_instance_count,
        scalable_target_min_capacity=target["MinCapacity"],
        has_scaling_policy=bool(plan["target_tracking"]),
    ) + check_no_capacity_alarm(
        alarm={**plan["alarm"], "AlarmActions": ["<the step policy's ARN>"]},
        action_policy_type=plan["step_scaling"]["PolicyType"],
    )


def register_scaling(
    plan: dict[str, dict[str, Any]],
    *,
    autoscaling: ApplicationAutoScalingClient,
    cloudwatch: CloudWatchClient,
    tags: list[TagTypeDef],
) -> str:
    """Make the calls of one component's plan; returns the step policy's ARN (the alarm's action)."""
    component = plan["register_scalable_target"]["ResourceId"]
    with aws_errors(f"register {component} with Application Auto Scaling"):
        autoscaling.register_scalable_target(**plan["register_scalable_target"])
    with aws_errors(f"put the target-tracking policy of {component}"):
        autoscaling.put_scaling_policy(**plan["target_tracking"])
    with aws_errors(f"put the step-scaling policy of {component}"):
        step = autoscaling.put_scaling_policy(**plan["step_scaling"])
    with aws_errors(f"put the no-capacity alarm of {component}"):
        cloudwatch.put_metric_alarm(**plan["alarm"], AlarmActions=[step["PolicyARN"]], Tags=tags)
    return str(step["PolicyARN"])


def _scaling(context: PreflightContext, hosting: ScaleToZeroHosting) -> list[Finding]:
    """F11/F12 on the calls the mode will make for the run's first component (all are alike)."""
    return plan_findings(hosting, scaling_plan(hosting, "<component>"))


class ScaleToZeroMode(ComponentsMode[ScaleToZeroHosting]):
    mode = "scale-to-zero"
    spec_type = ScaleToZeroHosting
    # Pools are not documented with ManagedInstanceScaling down to zero instances.
    supports_pools = False
    uses_scaling = True
    local_blocker = (
        "Application Auto Scaling is moto's locally, which refuses the "
        "sagemaker:inference-component:DesiredCopyCount dimension, and no local alarm would scale copies "
        "back from zero"
    )
    checks = (
        *COMPONENT_CHECKS,
        Check("scalable target, policies and the no-capacity alarm", ("F11", "F12"), _scaling),
        GPU_RUNTIME,
        TENSORRT_AFTER_SCALE_OUT,
    )

    def advance(self, request: DescribeRequest, *, clients: AwsClients) -> Progress:
        """Place the components, then, once they serve, register their scaling (F11, F12)."""
        progress = self.place(request, clients=clients)
        if not progress.ready:
            return progress
        hosting = self.recorded_hosting(request)
        tags = naming.tags(request.run_id, request.spec)
        for component in request.deploy.inference_components:
            plan = scaling_plan(hosting, component)
            refuse_blocking(plan_findings(hosting, plan), mode=self.mode)
            register_scaling(
                plan,
                autoscaling=clients.need("autoscaling"),
                cloudwatch=clients.need("cloudwatch"),
                tags=tags,
            )
        return progress


STRATEGY = ScaleToZeroMode()
