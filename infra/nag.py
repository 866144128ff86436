"""cdk-nag AwsSolutions findings this stack acknowledges, each on the narrowest construct, each with its reason.

Every other finding fails the synth (cdk-nag runs as a CDK validation plugin). Wildcard
resources are acknowledged one by one (``AwsSolutions-IAM5[Resource::<arn>]``), so a new
wildcard anywhere still fails; ``tests/stack/test_infra_iam.py`` checks independently that ``*`` is
a resource only of actions AWS does not authorize per resource.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aws_cdk import Acknowledgment, ArnFormat, Stack, Validations
from constructs import IConstruct

from infra.constants import PREFIX, state_machine_name
from infra.cross_region import region_buckets_of
from infra.network import StackNetwork, ec2_arn
from infra.permissions import CROSS_REGION_KINDS, RUN_PREFIXES_READ, SAGEMAKER_KINDS
from infra.sagemaker_role import image_repositories, sagemaker_log_arns, traces_log_arns
from infra.scaling_grants import TARGET_TRACKING_ALARMS
from state_machines import children, names
from workflows.janitor.cleanup import REPORTS_PREFIX
from workflows.naming import SWEEPS_PREFIX
from workflows.spec.model import TOKEN_SECRET_PREFIX

# Acknowledgement ids name the plugin that reports the finding.
PACK = "AwsSolutions"


@dataclass(frozen=True)
class Ack:
    path: str
    finding: str
    reason: str


def render(stack: Stack, value: str) -> str:
    """A resource as cdk-nag writes it in a finding id: ``<Logical.Arn>``, ``<AWS::Region>``, literals."""

    def walk(node: Any) -> str:
        if isinstance(node, str):
            return node
        if isinstance(node, dict) and "Ref" in node:
            return f"<{node['Ref']}>"
        if isinstance(node, dict) and "Fn::GetAtt" in node:
            return f"<{'.'.join(node['Fn::GetAtt'])}>"
        if isinstance(node, dict) and "Fn::Join" in node:
            separator, parts = node["Fn::Join"]
            return separator.join(walk(part) for part in parts)
        raise ValueError(f"cannot render {node!r}")

    return walk(stack.resolve(value))


def _wildcard(stack: Stack, resource: str) -> str:
    return f"AwsSolutions-IAM5[Resource::{render(stack, resource)}]"


class Acknowledgements:
    """Collects what was acknowledged (tests read ``self.acks``)."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.acks: list[Ack] = []

    def add(self, scope: IConstruct, finding: str, reason: str) -> None:
        Validations.of(scope).acknowledge(Acknowledgment(id=f"{PACK}::{finding}", reason=reason))
        self.acks.append(Ack(path=scope.node.path, finding=finding, reason=reason))


def acknowledge(
    stack: Stack,
    *,
    storage: Any,
    functions: Any,
    machines: Any,
    sagemaker: Any,
    triggers: Any,
    network: StackNetwork | None = None,
) -> list[Ack]:
    """Acknowledge the stack's expected findings; returns them."""
    a = Acknowledgements(stack)
    _network(a, stack, functions=functions, sagemaker=sagemaker, network=network)
    bucket = storage.bucket
    for prefix in (*RUN_PREFIXES_READ, SWEEPS_PREFIX, REPORTS_PREFIX):
        a.add(
            stack,
            _wildcard(stack, bucket.arn_for_objects(f"{prefix}*")),
            f"Objects under {prefix} of the artifact bucket: keys are made per run or per upload, so the "
            f"prefix is the narrowest scope; each role gets only the prefixes it reads or writes.",
        )
    for kind in SAGEMAKER_KINDS:
        a.add(
            stack,
            _wildcard(
                stack, stack.format_arn(service="sagemaker", resource=kind, resource_name=f"{PREFIX}-*")
            ),
            f"SageMaker {kind}s are created per run, named {PREFIX}-<run id>-...: the project's name prefix is "
            f"the scope (creates also require the deploybench:managed tag).",
        )
    a.add(
        stack,
        _wildcard(
            stack,
            stack.format_arn(service="sagemaker", resource="inference-router", resource_name=f"{PREFIX}-*"),
        ),
        f"A run across Regions has one inference router in the stack's Region, named {PREFIX}-<run id>-router: "
        "teardown and the janitor describe and delete it (only where tagged deploybench:managed).",
    )
    for resource in region_buckets_of(bucket):
        a.add(
            stack,
            _wildcard(stack, resource),
            "A run across Regions stages its artifact in the staging bucket of the Region it moves to "
            "(<bucket>-<region>: SageMaker reads model data only from the endpoint's Region), under staging/ only; "
            "the Region is the spec's, chosen at run time.",
        )
    for kind in CROSS_REGION_KINDS:
        a.add(
            stack,
            _wildcard(
                stack,
                stack.format_arn(service="sagemaker", resource=kind, resource_name=f"{PREFIX}-*", region="*"),
            ),
            f"A run across Regions (hosting.regions, named in the spec at run time) has its {kind} in each other "
            f"Region: teardown describes and deletes them there, named {PREFIX}-<run id>-... and only where "
            "tagged deploybench:managed.",
        )
    a.add(
        stack,
        _wildcard(
            stack,
            stack.format_arn(
                service="sagemaker", resource="inference-router", resource_name=f"{PREFIX}-*", region="*"
            ),
        ),
        "The janitor sweeps each Region runs may use (deploybench:janitorRegions): a run's router there, named "
        f"{PREFIX}-<run id>-router, is listed, and deleted only where tagged deploybench:managed.",
    )
    for group in sagemaker_log_arns(stack):
        if "*" not in group:
            continue
        a.add(
            stack,
            _wildcard(stack, group),
            "Container logs of the project's endpoints, inference components and processing jobs: SageMaker "
            "names the log groups and streams after the run's resources, so the name prefix is the scope.",
        )
    for group in traces_log_arns(stack):
        a.add(
            stack,
            _wildcard(stack, group),
            "A traced endpoint's traces group (hosting.tracing) is created at deploy with the run's tags and a "
            "retention; SageMaker names it after the run's endpoint, in the endpoint's Region, so the prefix is the scope.",
        )
    a.add(
        stack,
        _wildcard(
            stack,
            stack.format_arn(
                service="application-autoscaling", resource="scalable-target", resource_name="*"
            ),
        ),
        "Scale to zero registers each inference component's DesiredCopyCount; a scalable target's ARN ends with an "
        "id AWS assigns, so the statement is narrowed by the sagemaker namespace and the component dimension.",
    )
    for alarm in (f"{PREFIX}-*", TARGET_TRACKING_ALARMS):
        a.add(
            stack,
            _wildcard(
                stack,
                stack.format_arn(
                    service="cloudwatch",
                    resource="alarm",
                    resource_name=alarm,
                    arn_format=ArnFormat.COLON_RESOURCE_NAME,
                ),
            ),
            f"Scale-to-zero alarms: the run's no-capacity alarms ({PREFIX}-<run id>-...) and the target-tracking "
            "alarms Application Auto Scaling names after each component (TargetTracking-inference-component/"
            f"{PREFIX}-*-AlarmHigh|AlarmLow-<id>); PutMetricAlarm may name only scaling policies as actions, and "
            "the janitor only describes, lists the tags of and deletes them.",
        )
    a.add(
        stack,
        _wildcard(
            stack,
            stack.format_arn(
                service="secretsmanager",
                resource="secret",
                resource_name=f"{TOKEN_SECRET_PREFIX}*",
                arn_format=ArnFormat.COLON_RESOURCE_NAME,
            ),
        ),
        f"Hub tokens of private models (model.token_secret): the spec names the secret at run time, the spec "
        f"refuses names outside {TOKEN_SECRET_PREFIX}, and a secret's ARN ends with a suffix AWS assigns; read only.",
    )
    a.add(
        stack,
        _wildcard(
            stack,
            stack.format_arn(
                service="servicequotas",
                resource="sagemaker",
                resource_name="*",
                arn_format=ArnFormat.SLASH_RESOURCE_NAME,
            ),
        ),
        "CheckSpec reads the account's SageMaker quotas before any spend (F39): quota codes are found by "
        "name with ListServiceQuotas at run time, so GetServiceQuota is scoped to SageMaker's quotas; read only.",
    )
    a.add(
        stack,
        _wildcard(stack, stack.format_arn(service="sagemaker", resource="training-plan", resource_name="*")),
        "CheckSpec reads the training plan a spec's hosting.capacity_reservation names (F06), before any spend: "
        "the user's reservation, named at run time; DescribeTrainingPlan only.",
    )
    # Parents follow their children's executions; the redeploy queue check reads its own machine's.
    followed = sorted({child for name in names() for child in children(name)} | {"redeploy_pipeline"})
    for name in followed:
        a.add(
            stack,
            _wildcard(
                stack,
                stack.format_arn(
                    service="states",
                    resource="execution",
                    resource_name=f"{state_machine_name(name)}:*",
                    arn_format=ArnFormat.COLON_RESOURCE_NAME,
                ),
            ),
            f"Executions of {state_machine_name(name)} only: execution names are made per run at run time.",
        )
    unscopable = (
        "Resource * only for actions AWS does not authorize per resource (sagemaker:List*, X-Ray "
        "PutTraceSegments/PutTelemetryRecords/GetSampling*, cloudwatch:GetMetric*, ecr:GetAuthorizationToken, CloudWatch "
        "Logs delivery for Step Functions, tag:GetResources, servicequotas:ListServiceQuotas, EC2's DescribeNetworkInterfaces/DescribeVpcs/"
        "DescribeDhcpOptions/DescribeSubnets/DescribeSecurityGroups and DeleteNetworkInterfacePermission, which "
        "names a permission id, not an interface); tests/stack/test_infra_iam.py asserts no other action has it."
    )
    for scope in (functions, sagemaker, machines):
        a.add(scope, "AwsSolutions-IAM5[Resource::*]", unscopable)
    for repositories in image_repositories(stack):
        a.add(
            sagemaker,
            _wildcard(stack, repositories),
            "Pull-only access to the registry account of AWS's serving images in the stack's region (each "
            "region's account from the SageMaker SDK's image table): the image and its build are chosen "
            "per spec at run time.",
        )
    a.add(
        functions,
        "AwsSolutions-L1",
        "Python 3.11 on purpose: the project requires Python >=3.11,<3.12 and the shared asset's wheels are "
        "built for CPython 3.11; moving runtimes is a deliberate change of both.",
    )
    a.add(
        triggers.dead_letters,
        "AwsSolutions-SQS3",
        "This queue is itself the dead-letter queue of the schedules and the upload rule.",
    )
    janitor = functions.by_placeholder["JanitorFunctionArn"]
    a.add(
        stack,
        f"AwsSolutions-IAM5[Resource::{render(stack, janitor.function_arn)}:*]",
        "EventBridge Scheduler's Lambda target grants invoke on the janitor function and its versions; the "
        "function ARN is the scope.",
    )
    return a.acks


def _network(
    a: Acknowledgements, stack: Stack, *, functions: Any, sagemaker: Any, network: StackNetwork | None
) -> None:
    """The network interfaces SageMaker (and, in the stack's VPC, Lambda) creates as the roles."""
    interfaces = ec2_arn(stack, "network-interface", "*")
    if network is None:
        for kind in ("subnet", "security-group"):
            a.add(
                sagemaker,
                _wildcard(stack, ec2_arn(stack, kind, "*")),
                f"CreateNetworkInterface in the {kind}s a spec names in hosting.vpc or benchmark.job_vpc: each "
                "spec chooses its VPC, and the stack was given none (-c deploybench:vpcId/subnetIds/"
                "securityGroupIds narrows this to those ids); the account and region are the scope.",
            )
        a.add(
            sagemaker,
            _wildcard(stack, interfaces),
            "SageMaker creates, shares and deletes the containers' network interfaces as the execution role; "
            "EC2 assigns their ids at creation, so the account and region are the scope without a stack VPC.",
        )
        return
    for scope, who in (
        (sagemaker, "SageMaker, for the containers,"),
        (functions, "Lambda, for the functions,"),
    ):
        a.add(
            scope,
            _wildcard(stack, interfaces),
            f"{who} creates and deletes network interfaces as this role; EC2 assigns their ids at creation, so "
            f"every action on them but the create is conditioned on ec2:Vpc = {network.vpc_id}, and the create "
            "is limited to the stack's subnets and security groups.",
        )
