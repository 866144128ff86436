"""What a run across Regions may do: deploy the same artifact in another Region of hosting.regions and route to it.

A run moves to the next Region when the one before has no capacity left (F06 past the last instance
type, ``workflows.remediation.changes.next_region``); CreateInferenceRouter then routes over both
(``workflows.steps.create_inference_router``). The router statements follow the developer guide's router
security page: ``aws:RequestTag``/``aws:TagKeys`` control CreateInferenceRouter, ``aws:ResourceTag``
Describe/Update/Delete/InvokeInferenceRouter, and the router calls every destination with the caller's
own credentials, so the caller needs ``sagemaker:InvokeEndpoint`` on each destination too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3

from infra.constants import STAGING_PREFIX
from infra.ownership import ROUTER_CLEANUP, ROUTER_READ, changes, creates

if TYPE_CHECKING:
    from infra.permissions import Scope

CROSS_REGION_KINDS = ("endpoint", "endpoint-config", "model")
"""What a run across Regions (hosting.regions) creates outside the primary Region."""
ROUTER_CREATE = ["sagemaker:CreateInferenceRouter", "sagemaker:AddTags"]
ELSEWHERE_CREATE = ["sagemaker:CreateModel", "sagemaker:CreateEndpointConfig", "sagemaker:CreateEndpoint"]
# InvokeEndpoint: warm-up and the benchmark call the other Region's endpoint directly, and the router
# calls it with the caller's credentials.
ELSEWHERE_READ = ["sagemaker:DescribeEndpoint", "sagemaker:ListTags", "sagemaker:InvokeEndpoint"]
ELSEWHERE_DELETE = ["sagemaker:DeleteEndpoint", "sagemaker:DeleteEndpointConfig", "sagemaker:DeleteModel"]


def region_buckets_of(bucket: s3.IBucket) -> list[str]:
    """The staging buckets of other Regions (``<bucket>-<region>``) and the runs' staged objects in them."""
    return [f"{bucket.bucket_arn}-*", f"{bucket.bucket_arn}-*/{STAGING_PREFIX}*"]


def across_regions(scope: Scope) -> list[iam.PolicyStatement]:
    """A run that moves to another Region of hosting.regions (F06 past the last type) and routes back.

    The same db-* endpoint resources in any Region, created only with the managed tag and changed only where
    tagged; the artifact's copy in that Region's staging bucket; the run's router in the stack's Region,
    created with the managed tag in the request (the router security page's aws:RequestTag on
    CreateInferenceRouter), invoked, and replaced only where tagged. The router calls each destination with
    the caller's own credentials, so the caller must be allowed InvokeEndpoint on every destination too.
    """
    elsewhere = scope.sagemaker_arns(CROSS_REGION_KINDS, region="*")
    buckets = region_buckets_of(scope.bucket)
    return [
        creates(elsewhere, [*ELSEWHERE_CREATE, "sagemaker:AddTags"]),
        iam.PolicyStatement(actions=ELSEWHERE_READ, resources=elsewhere),
        changes(elsewhere, ELSEWHERE_DELETE),
        creates(scope.routers(), ROUTER_CREATE),
        iam.PolicyStatement(
            actions=[*ROUTER_READ, "sagemaker:InvokeInferenceRouter"], resources=scope.routers()
        ),
        changes(scope.routers(), ROUTER_CLEANUP),
        iam.PolicyStatement(actions=["s3:CreateBucket", "s3:ListBucket"], resources=buckets[:1]),
        iam.PolicyStatement(
            actions=["s3:PutObject", "s3:GetObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
            resources=buckets[1:],
        ),
    ]
