"""The role SageMaker models and processing jobs run as (the GPU benchmark's job included).

Functions pass it with ``iam:PassRole`` (scoped to this role, and to ``sagemaker.amazonaws.com``
by ``iam:PassedToService``). It reads model artifacts and job inputs, writes job outputs under
``results/``, pulls the serving images, writes its own logs, and lets a benchmark job invoke
the run's endpoint (in any Region) and its router. In a VPC, it creates the containers' network interfaces (infra/network.py).
"""

from __future__ import annotations

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.constants import PREFIX
from infra.cross_region import region_buckets_of
from infra.network import StackNetwork, sagemaker_interfaces
from workflows.images.table import registry_accounts
from workflows.naming import (
    SAGEMAKER_READ_PREFIXES,
    SAGEMAKER_WRITE_PREFIXES,
    endpoint_traces_log_group,
    sagemaker_log_groups,
)


def log_group_arns(stack: Stack, names: list[str]) -> list[str]:
    """Log-group ARNs of ``names`` in any Region: a run across Regions (``hosting.regions``) has endpoints,
    and their log groups, in Regions the stack does not know until the spec names them."""
    return [
        stack.format_arn(
            service="logs",
            region="*",
            resource="log-group",
            resource_name=name,
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        for name in names
    ]


def sagemaker_log_arns(stack: Stack) -> list[str]:
    """The log groups SageMaker writes for run resources, and the streams of the fixed-name ones.

    A fixed-name group is also given as ``<group>:*``: CloudWatch Logs authorizes some actions on
    that form of the group's ARN, and stream ARNs (``<group>:log-stream:<stream>``) fall under it.
    The names stay the run's prefix in every Region.
    """
    names: list[str] = []
    for group in sagemaker_log_groups(f"{PREFIX}-*"):
        names += [group] if group.endswith("*") else [group, f"{group}:*"]
    return log_group_arns(stack, names)


def traces_log_arns(stack: Stack) -> list[str]:
    """The traces groups of the runs' endpoints (``/aws/sagemaker/Endpoints/db-*/traces``), in any Region,
    in both of the forms CloudWatch Logs authorizes (the group, and ``<group>:*``)."""
    group = endpoint_traces_log_group(f"{PREFIX}-*")
    return log_group_arns(stack, [group, f"{group}:*"])


def image_repositories(stack: Stack) -> list[str]:
    """Every registry account of the image table (the SageMaker SDK's per-region accounts), in any
    Region: SageMaker pulls the serving image as this role from the endpoint's Region's account, and a
    run across Regions (``hosting.regions``) deploys in Regions other than the stack's."""
    return [
        stack.format_arn(service="ecr", region="*", account=account, resource="repository", resource_name="*")
        for account in registry_accounts()
    ]


class SageMakerExecution(Construct):
    """One role for every SageMaker model and processing job a run creates."""

    def __init__(
        self, scope: Construct, construct_id: str, *, bucket: s3.IBucket, network: StackNetwork | None = None
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
            description="deploybench: SageMaker models and processing jobs (artifacts, images, logs).",
        )
        self._build_storage(bucket)
        self._build_images(stack)
        self._build_logs(stack)
        # A spec's hosting.vpc / benchmark.job_vpc: SageMaker attaches the containers' interfaces as this role.
        for statement in sagemaker_interfaces(stack, network):
            self.role.add_to_policy(statement)
        self._build_benchmark_calls(stack)

    def _build_benchmark_calls(self, stack: Stack) -> None:
        """The benchmark job invokes the run's endpoint, and with InferenceComponentName the component: IAM
        authorizes InvokeEndpoint on both (Service Authorization Reference). After a run moved across Regions
        (hosting.regions) the endpoint is in another Region, and the job measures the run's router in the
        stack's Region, which calls each destination with the job's own credentials (the router security
        page): so InvokeEndpoint on db-* endpoints in any Region, InvokeInferenceRouter on the runs' routers."""
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["sagemaker:InvokeEndpoint"],
                resources=[
                    stack.format_arn(
                        service="sagemaker", resource="endpoint", resource_name=f"{PREFIX}-*", region="*"
                    ),
                    stack.format_arn(
                        service="sagemaker", resource="inference-component", resource_name=f"{PREFIX}-*"
                    ),
                ],
            )
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["sagemaker:InvokeInferenceRouter"],
                resources=[
                    stack.format_arn(
                        service="sagemaker", resource="inference-router", resource_name=f"{PREFIX}-*"
                    )
                ],
            )
        )

    def _build_storage(self, bucket: s3.IBucket) -> None:
        # Every S3 URI the pipeline hands SageMaker is under one of these (workflows/naming.py).
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject"],
                resources=[bucket.arn_for_objects(f"{p}*") for p in SAGEMAKER_READ_PREFIXES],
            )
        )
        # A run across Regions: the artifact's copy in the staging bucket of the Region it moved to.
        self.role.add_to_policy(
            iam.PolicyStatement(actions=["s3:GetObject"], resources=region_buckets_of(bucket)[1:])
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["s3:ListBucket"],
                resources=[bucket.bucket_arn],
                conditions={
                    "StringLike": {
                        "s3:prefix": [f"{p}*" for p in (*SAGEMAKER_READ_PREFIXES, *SAGEMAKER_WRITE_PREFIXES)]
                    }
                },
            )
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["s3:PutObject", "s3:AbortMultipartUpload"],
                resources=[bucket.arn_for_objects(f"{p}*") for p in SAGEMAKER_WRITE_PREFIXES],
            )
        )

    def _build_images(self, stack: Stack) -> None:
        self.role.add_to_policy(iam.PolicyStatement(actions=["ecr:GetAuthorizationToken"], resources=["*"]))
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=[
                    "ecr:BatchGetImage",
                    "ecr:GetDownloadUrlForLayer",
                    "ecr:BatchCheckLayerAvailability",
                ],
                resources=image_repositories(stack),
            )
        )

    def _build_logs(self, stack: Stack) -> None:
        # Endpoints, inference components (apart from their endpoint) and processing jobs.
        groups = sagemaker_log_arns(stack)
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=[
                    "logs:CreateLogGroup",
                    "logs:CreateLogStream",
                    "logs:PutLogEvents",
                    "logs:DescribeLogStreams",
                ],
                resources=groups,
            )
        )
