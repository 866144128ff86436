"""The stack's VPC (CDK context) and the network-interface rights of the roles that run in one.

SageMaker creates the network interfaces of a VPC model, endpoint or processing job as the
execution role; Lambda creates those of a VPC function as the function's role. EC2 authorizes
``CreateNetworkInterface`` per subnet, security group and interface, and the interface actions
per interface with the ``ec2:Vpc`` key; ``Describe*`` and ``DeleteNetworkInterfacePermission``
(which names a permission id, not an interface) only with Resource ``*``.

The SageMaker role always gets these rights, because each spec chooses its own ``hosting.vpc``:
without the stack's VPC they cover the account's subnets and groups in the stack's region; with
it (``-c deploybench:vpcId=vpc-... -c deploybench:subnetIds=subnet-a,subnet-b
-c deploybench:securityGroupIds=sg-...``), only those subnets and groups and that VPC's
interfaces, and the stack's own functions then run there too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from constructs import Construct

CONTEXT_VPC_ID = "deploybench:vpcId"
CONTEXT_SUBNET_IDS = "deploybench:subnetIds"
CONTEXT_SECURITY_GROUP_IDS = "deploybench:securityGroupIds"
_ID = {
    CONTEXT_VPC_ID: re.compile(r"^vpc-([0-9a-f]{8}|[0-9a-f]{17})$"),
    CONTEXT_SUBNET_IDS: re.compile(r"^subnet-([0-9a-f]{8}|[0-9a-f]{17})$"),
    CONTEXT_SECURITY_GROUP_IDS: re.compile(r"^sg-([0-9a-f]{8}|[0-9a-f]{17})$"),
}
_EXAMPLE = {
    CONTEXT_VPC_ID: "vpc-0123456789abcdef0",
    CONTEXT_SUBNET_IDS: "subnet-0123456789abcdef0,subnet-0fedcba9876543210",
    CONTEXT_SECURITY_GROUP_IDS: "sg-0123456789abcdef0",
}
# AWS's list for SageMaker in a VPC (models, endpoints, processing jobs).
SAGEMAKER_ENI_CREATE = ["ec2:CreateNetworkInterface"]
SAGEMAKER_ENI_MANAGE = ["ec2:CreateNetworkInterfacePermission", "ec2:DeleteNetworkInterface"]
SAGEMAKER_ENI_UNSCOPED = [
    "ec2:DeleteNetworkInterfacePermission",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeVpcs",
    "ec2:DescribeDhcpOptions",
    "ec2:DescribeSubnets",
    "ec2:DescribeSecurityGroups",
]
# AWSLambdaVPCAccessExecutionRole's EC2 actions (its log actions each role already has, on its own group).
LAMBDA_ENI_MANAGE = [
    "ec2:DeleteNetworkInterface",
    "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses",
]
LAMBDA_ENI_UNSCOPED = ["ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets"]
UNSCOPED_EC2 = frozenset({*SAGEMAKER_ENI_UNSCOPED, *LAMBDA_ENI_UNSCOPED})


@dataclass(frozen=True)
class StackNetwork:
    """The VPC the stack's functions run in, and the only one the SageMaker role may use."""

    vpc_id: str
    subnet_ids: tuple[str, ...]
    security_group_ids: tuple[str, ...]

    @classmethod
    def from_context(cls, get: Callable[[str], object]) -> StackNetwork | None:
        """The VPC named by the three context keys; None when none of them is set.

        Raises:
            ValueError: a key is missing or holds something other than EC2 ids of its kind.
        """
        values = {key: _ids(get(key)) for key in _ID}
        if not any(values.values()):
            return None
        for key, ids in values.items():
            if not ids:
                raise ValueError(
                    f"CDK context {key} is empty while {', '.join(k for k in _ID if values[k])} is set: the stack "
                    f"needs the VPC id, its subnets and its security groups together. Add -c {key}={_EXAMPLE[key]}, "
                    "or unset all three to run the functions outside a VPC."
                )
            bad = [i for i in ids if not _ID[key].match(i)]
            if bad or (key == CONTEXT_VPC_ID and len(ids) != 1):
                raise ValueError(
                    f"CDK context {key}={','.join(ids)!r} is not accepted: it takes "
                    f"{'one id' if key == CONTEXT_VPC_ID else 'comma-separated ids'} like {_EXAMPLE[key]} "
                    "(the prefix and 8 or 17 hex digits). Fix the value to the ids EC2 shows for the VPC."
                )
        return cls(values[CONTEXT_VPC_ID][0], values[CONTEXT_SUBNET_IDS], values[CONTEXT_SECURITY_GROUP_IDS])


def _ids(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list) else str(value).split(",")
    return tuple(str(i).strip() for i in items if str(i).strip())


def ec2_arn(stack: Stack, kind: str, name: str) -> str:
    return stack.format_arn(service="ec2", resource=kind, resource_name=name)


def interface_scope(stack: Stack, network: StackNetwork | None) -> tuple[list[str], dict[str, object]]:
    """What a role may create interfaces in (subnets, groups, the interfaces), and the condition on
    acting on an interface: the stack's VPC when it has one, else the account's in this region."""
    if network is None:
        return [ec2_arn(stack, kind, "*") for kind in ("subnet", "security-group", "network-interface")], {}
    return [
        *(ec2_arn(stack, "subnet", s) for s in network.subnet_ids),
        *(ec2_arn(stack, "security-group", g) for g in network.security_group_ids),
        ec2_arn(stack, "network-interface", "*"),
    ], {"ArnEquals": {"ec2:Vpc": ec2_arn(stack, "vpc", network.vpc_id)}}


def _interfaces(
    stack: Stack, network: StackNetwork | None, manage: list[str], unscoped: list[str]
) -> list[iam.PolicyStatement]:
    create_on, condition = interface_scope(stack, network)
    return [
        iam.PolicyStatement(actions=["ec2:CreateNetworkInterface"], resources=create_on),
        iam.PolicyStatement(
            actions=manage, resources=[ec2_arn(stack, "network-interface", "*")], conditions=condition or None
        ),
        iam.PolicyStatement(actions=unscoped, resources=["*"]),
    ]


def sagemaker_interfaces(stack: Stack, network: StackNetwork | None) -> list[iam.PolicyStatement]:
    """The execution role's rights for a VPC model, endpoint or processing job."""
    return _interfaces(stack, network, SAGEMAKER_ENI_MANAGE, SAGEMAKER_ENI_UNSCOPED)


def lambda_interfaces(stack: Stack, network: StackNetwork) -> list[iam.PolicyStatement]:
    """A VPC function's role: AWSLambdaVPCAccessExecutionRole's EC2 rights, narrowed to the stack's VPC."""
    return _interfaces(stack, network, LAMBDA_ENI_MANAGE, LAMBDA_ENI_UNSCOPED)


@dataclass(frozen=True)
class Placement:
    """The ``vpc``, ``vpc_subnets`` and ``security_groups`` every function of the stack is given."""

    vpc: ec2.IVpc
    subnets: ec2.SubnetSelection
    security_groups: list[ec2.ISecurityGroup]


def placement(scope: Construct, network: StackNetwork) -> Placement:
    """The stack's VPC, subnets and groups imported by id (no lookup: synth needs no account)."""
    stack = Stack.of(scope)
    vpc = ec2.Vpc.from_vpc_attributes(
        scope, "Vpc", vpc_id=network.vpc_id, availability_zones=stack.availability_zones
    )
    subnets = [ec2.Subnet.from_subnet_id(scope, f"Subnet{i}", s) for i, s in enumerate(network.subnet_ids)]
    groups = [
        ec2.SecurityGroup.from_security_group_id(scope, f"SecurityGroup{i}", g, mutable=False)
        for i, g in enumerate(network.security_group_ids)
    ]
    return Placement(vpc, ec2.SubnetSelection(subnets=subnets), groups)
