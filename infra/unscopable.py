"""The actions AWS authorizes only with Resource "*": the one list both the policies
(``infra/permissions.py``) and the cdk-nag acknowledgements read."""

from __future__ import annotations

from infra.network import UNSCOPED_EC2

# Actions AWS authorizes only with Resource "*" (no resource-level permissions).
UNSCOPABLE = frozenset(
    {
        "sagemaker:ListEndpoints",
        "sagemaker:ListEndpointConfigs",
        "sagemaker:ListModels",
        "sagemaker:ListInferenceComponents",
        "sagemaker:ListProcessingJobs",
        "sagemaker:ListInferenceRouters",
        "cloudwatch:GetMetricData",
        "cloudwatch:GetMetricStatistics",
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
        "xray:GetSamplingRules",
        "xray:GetSamplingTargets",
        "ecr:GetAuthorizationToken",
        "logs:CreateLogDelivery",
        "logs:GetLogDelivery",
        "logs:UpdateLogDelivery",
        "logs:DeleteLogDelivery",
        "logs:ListLogDeliveries",
        "logs:PutResourcePolicy",
        "logs:DescribeResourcePolicies",
        "logs:DescribeLogGroups",
        "application-autoscaling:DescribeScalableTargets",
        "application-autoscaling:DescribeScalingPolicies",
        "tag:GetResources",
        "servicequotas:ListServiceQuotas",
        *UNSCOPED_EC2,
    }
)
