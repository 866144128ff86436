"""One Lambda function per row of ``state_machines.FUNCTIONS``: zip functions share one code asset,
container functions (``container=True``: convert and pack) share one image.

Every function has its own role (its profile in ``infra/permissions.py``, write access to its
own log group, X-Ray), Powertools settings in its environment, and the settings the handlers
read (``DEPLOYBENCH_BUCKET``, ``DEPLOYBENCH_SAGEMAKER_ROLE_ARN``, ``DEPLOYBENCH_KMS_KEY_ARN``); a
function that reads or writes objects may use the bucket's key for that. Given the stack's VPC,
every function runs in its subnets and security groups (infra/network.py).
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Duration, RemovalPolicy, Size, Stack
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.bundling import function_code
from infra.constants import IMAGE_DOCKERFILE, LOG_LEVEL, METRICS_NAMESPACE, ROOT, SERVICE_NAME, function_name
from infra.network import Placement, StackNetwork, lambda_interfaces, placement
from infra.permissions import Scope, function_statements
from state_machines import FUNCTIONS, LambdaFunction
from workflows.conversion.hub import FUNCTION_VPC_ENV
from workflows.naming import CONVERSIONS_PREFIX
from workflows.settings import KMS_KEY_ENV

# Lambda's ceiling for memory and /tmp: a 1 GB model, its ONNX export and the packed tarball fit.
CONTAINER_STORAGE_MB = 10240
LOG_RETENTION = logs.RetentionDays.ONE_MONTH
# The steps whose creates name the key (CreateEndpointConfig's KmsKeyId in DeployEndpoint,
# CreateProcessingJob's VolumeKmsKeyId in StartBenchmarkJob): SageMaker then creates a grant as the
# caller. The other steps share the pipeline-step profile's SageMaker creates but never send a key,
# so they get no kms:CreateGrant (tests/stack/test_encryption.py finds the call sites).
KEYED_CREATORS = frozenset({"DeployEndpoint", "StartBenchmarkJob"})


class Functions(Construct):
    """``self.by_placeholder[placeholder]`` is the function that serves it."""

    def __init__(
        self, scope: Construct, construct_id: str, *, access: Scope, network: StackNetwork | None = None
    ) -> None:
        super().__init__(scope, construct_id)
        self.access = access
        self.network = network
        self.placement: Placement | None = placement(self, network) if network else None
        self.code = function_code()
        self.image = ecr_assets.DockerImageAsset(
            self,
            "Image",
            directory=str(ROOT),
            file=IMAGE_DOCKERFILE,
            platform=ecr_assets.Platform.LINUX_AMD64,
            # Staged (copied, filtered by .dockerignore) at synth and built only by `cdk deploy`:
            # synth needs no Docker engine.
        )
        # Processing jobs (the GPU benchmark) may run the same image: SageMaker pulls it as its role.
        self.image.repository.grant_pull(access.sagemaker_role)
        self.by_placeholder: dict[str, lambda_.Function] = {
            row.placeholder: self._build_function(row) for row in FUNCTIONS
        }

    def _environment(self, row: LambdaFunction) -> dict[str, str]:
        environment = {
            "POWERTOOLS_SERVICE_NAME": SERVICE_NAME,
            "POWERTOOLS_LOG_LEVEL": LOG_LEVEL,
            "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
            "DEPLOYBENCH_BUCKET": self.access.bucket.bucket_name,
            "DEPLOYBENCH_SAGEMAKER_ROLE_ARN": self.access.sagemaker_role.role_arn,
            "DEPLOYBENCH_JOB_IMAGE_URI": self.image.image_uri,
            # ConvertToOnnx serves an artifact converted before from the same inputs (any run, any sweep member).
            "DEPLOYBENCH_CONVERSION_CACHE": f"s3://{self.access.bucket.bucket_name}/{CONVERSIONS_PREFIX}",
        }
        if self.access.artifact_key is not None:
            environment[KMS_KEY_ENV] = self.access.artifact_key.key.key_arn
        if row.container:
            environment["HF_HOME"] = "/tmp/huggingface"
        if self.network is not None:
            # The Hub is reached only through the VPC's NAT: a failed Hub call then names the VPC (hub.py).
            environment[FUNCTION_VPC_ENV] = self.network.vpc_id
        return environment

    def _build_role(self, row: LambdaFunction, log_group: logs.LogGroup) -> iam.Role:
        role = iam.Role(
            self,
            f"{row.placeholder.removesuffix('Arn')}Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"deploybench {function_name(row.placeholder)}: {row.description}",
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[log_group.log_group_arn],
            )
        )
        statements = function_statements(row.placeholder, self.access)
        if self.network is not None:
            # Given explicitly: the role is ours, so Lambda adds no AWS managed policy for the VPC.
            for statement in lambda_interfaces(Stack.of(self), self.network):
                role.add_to_policy(statement)
        for statement in statements:
            role.add_to_policy(statement)
        actions = {action for statement in statements for action in statement.actions}
        key = self.access.artifact_key
        if key is not None and any(a.startswith("s3:") and a != "s3:ListBucket" for a in actions):
            key.grant_use(role, for_sagemaker=row.state in KEYED_CREATORS)
        return role

    def _build_function(self, row: LambdaFunction) -> lambda_.Function:
        name = function_name(row.placeholder)
        construct_id = row.placeholder.removesuffix("Arn")
        log_group = logs.LogGroup(
            self,
            f"{construct_id}Logs",
            log_group_name=f"/aws/lambda/{name}",
            retention=LOG_RETENTION,
            removal_policy=RemovalPolicy.DESTROY,
        )
        common: dict[str, Any] = {
            "function_name": name,
            "description": f"deploybench: {row.description}",
            "memory_size": row.memory_mb,
            "timeout": Duration.seconds(row.timeout_s),
            "role": self._build_role(row, log_group),
            "log_group": log_group,
            "tracing": lambda_.Tracing.ACTIVE,
            "architecture": lambda_.Architecture.X86_64,
            "environment": self._environment(row),
        }
        if self.placement is not None:
            common |= {
                "vpc": self.placement.vpc,
                "vpc_subnets": self.placement.subnets,
                "security_groups": self.placement.security_groups,
            }
        if row.container:
            return lambda_.DockerImageFunction(
                self,
                construct_id,
                code=lambda_.DockerImageCode.from_ecr(
                    self.image.repository, tag_or_digest=self.image.image_tag, cmd=[row.handler]
                ),
                ephemeral_storage_size=Size.mebibytes(CONTAINER_STORAGE_MB),
                **common,
            )
        return lambda_.Function(
            self,
            construct_id,
            runtime=lambda_.Runtime.PYTHON_3_11,
            handler=row.handler,
            code=self.code,
            **common,
        )
