"""What SageMaker does as the execution role for a request that puts containers in a VPC.

SageMaker creates one network interface per instance in the request's subnets with its security
groups, shares it with its own account and deletes it when the resource goes, describing the
VPC, its DHCP options, the subnets and groups first (AWS's list for SageMaker in a VPC). EC2
authorizes the create on the subnet, the security group and the new interface; the interface
actions carry ``ec2:Vpc``, whose value the request does not give: the VPC of these tests is one.
"""

from __future__ import annotations

from typing import Any

from tests.iam_actions_support import Access, Where

INTERFACE = "eni-0123456789abcdef0"
TEST_VPC = "vpc-0123456789abcdef0"
DESCRIBES = (
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeVpcs",
    "ec2:DescribeDhcpOptions",
    "ec2:DescribeSubnets",
    "ec2:DescribeSecurityGroups",
    "ec2:DeleteNetworkInterfacePermission",
)


def vpc_config(operation: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The VpcConfig of CreateModel, CreateEndpointConfig or CreateProcessingJob's NetworkConfig."""
    if operation == "CreateProcessingJob":
        return (params.get("NetworkConfig") or {}).get("VpcConfig")
    if operation in ("CreateModel", "CreateEndpointConfig"):
        return params.get("VpcConfig")
    return None


def interface_accesses(operation: str, params: dict[str, Any], where: Where) -> list[Access]:
    """The EC2 authorizations SageMaker needs as the role for the request's VPC (none outside one)."""
    config = vpc_config(operation, params)
    if not config:
        return []
    interface = where.arn("ec2", f"network-interface/{INTERFACE}")
    in_vpc = {"ec2:Vpc": where.arn("ec2", f"vpc/{TEST_VPC}")}
    created_on = [
        *(where.arn("ec2", f"subnet/{s}") for s in config["Subnets"]),
        *(where.arn("ec2", f"security-group/{g}") for g in config["SecurityGroupIds"]),
    ]
    return [
        *(Access("ec2:CreateNetworkInterface", arn, in_vpc) for arn in [*created_on, interface]),
        Access("ec2:CreateNetworkInterfacePermission", interface, in_vpc),
        Access("ec2:DeleteNetworkInterface", interface, in_vpc),
        *(Access(action, "*") for action in DESCRIBES),
    ]
