"""The read-only VPC check on moto's EC2: ids exist, zones spread, routes to S3 and the SageMaker runtime."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.aws import Aws
from workflows.hosting.network import VpcSpec
from workflows.readiness.findings import FAIL, OK
from workflows.readiness.network import check_spec_network, check_vpc
from workflows.spec.pipeline import parse_spec

REGION = "us-east-1"


@pytest.fixture
def ec2(aws: Aws) -> Any:
    return aws.client("ec2")


def network(ec2: Any, zones: tuple[str, ...] = ("us-east-1a", "us-east-1b")) -> dict[str, Any]:
    """A VPC with one private subnet per zone on one route table, and a security group."""
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    table = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    subnets = []
    for index, zone in enumerate(zones):
        subnet = ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.0.{index}.0/24", AvailabilityZone=zone)["Subnet"]
        ec2.associate_route_table(RouteTableId=table, SubnetId=subnet["SubnetId"])
        subnets.append(subnet["SubnetId"])
    group = ec2.create_security_group(GroupName="endpoint", Description="endpoint", VpcId=vpc)["GroupId"]
    return {"vpc": vpc, "table": table, "subnets": subnets, "group": group}


def statuses(found: list[Any]) -> list[tuple[str, str]]:
    return [(c.status, c.detail) for c in found]


def test_private_subnets_without_endpoints_are_named_with_the_endpoint_to_add(ec2: Any) -> None:
    # Given two private subnets with no S3 gateway endpoint, no runtime endpoint and no NAT
    net = network(ec2)
    vpc = VpcSpec(subnets=net["subnets"], security_groups=[net["group"]])
    # When the benchmark job's VPC is checked
    found = check_vpc(ec2, vpc, subject="benchmark.job_vpc", region=REGION, needs_runtime=True)
    # Then each subnet fails on S3 and on the runtime, naming the endpoint service to add
    failed = [c for c in found if c.status == FAIL]
    assert len(failed) == 4
    assert sum("com.amazonaws.us-east-1.s3" in c.detail for c in failed) == 2
    assert sum("com.amazonaws.us-east-1.sagemaker.runtime" in c.detail for c in failed) == 2


def test_gateway_and_interface_endpoints_make_the_subnets_pass(ec2: Any) -> None:
    # Given an S3 gateway endpoint on the subnets' route table and a runtime interface endpoint
    net = network(ec2)
    s3 = ec2.create_vpc_endpoint(
        VpcId=net["vpc"], ServiceName=f"com.amazonaws.{REGION}.s3", RouteTableIds=[net["table"]]
    )["VpcEndpoint"]["VpcEndpointId"]
    ec2.create_vpc_endpoint(
        VpcId=net["vpc"],
        ServiceName=f"com.amazonaws.{REGION}.sagemaker.runtime",
        VpcEndpointType="Interface",
        SubnetIds=net["subnets"],
        SecurityGroupIds=[net["group"]],
        PrivateDnsEnabled=True,
    )
    vpc = VpcSpec(subnets=net["subnets"], security_groups=[net["group"]])
    # When checked for two instances and the job
    found = check_vpc(ec2, vpc, subject="hosting.vpc", region=REGION, instance_count=2, needs_runtime=True)
    # Then every check passes and names the route it found
    assert {c.status for c in found} == {OK}
    assert any(f"gateway endpoint {s3}" in c.detail for c in found)
    assert any("interface endpoint" in c.detail and "runtime" in c.detail for c in found)


def test_a_nat_gateway_is_a_route_to_both(ec2: Any) -> None:
    # Given a route table whose default route goes to a NAT gateway
    net = network(ec2, zones=("us-east-1a",))
    public = ec2.create_subnet(VpcId=net["vpc"], CidrBlock="10.0.9.0/24")["Subnet"]["SubnetId"]
    allocation = ec2.allocate_address(Domain="vpc")["AllocationId"]
    nat = ec2.create_nat_gateway(SubnetId=public, AllocationId=allocation)["NatGateway"]["NatGatewayId"]
    ec2.create_route(RouteTableId=net["table"], DestinationCidrBlock="0.0.0.0/0", NatGatewayId=nat)
    vpc = VpcSpec(subnets=net["subnets"], security_groups=[net["group"]])
    # When checked
    found = check_vpc(ec2, vpc, subject="hosting.vpc", region=REGION, needs_runtime=True)
    # Then S3 and the runtime are reached through the NAT
    assert statuses(found) == [
        (OK, "reaches S3 through a NAT gateway"),
        (OK, "reaches the SageMaker runtime through a NAT gateway"),
    ]


def test_two_instances_in_one_zone_and_unknown_ids_fail(ec2: Any) -> None:
    # Given two subnets in the same zone, and a security group id that does not exist
    net = network(ec2, zones=("us-east-1a", "us-east-1a"))
    vpc = VpcSpec(subnets=net["subnets"], security_groups=[net["group"], "sg-0000000000000dead"])
    # When checked for two instances
    found = check_vpc(ec2, vpc, subject="hosting.vpc", region=REGION, instance_count=2)
    details = [c.detail for c in found if c.status == FAIL]
    # Then the missing group and the single zone are named
    assert any("sg-0000000000000dead" in d and "do not exist" in d for d in details)
    assert any("two Availability Zones" in d and "us-east-1a" in d for d in details)


def test_a_spec_checks_the_hosting_vpc_and_the_job_in_it(ec2: Any) -> None:
    # Given a spec in a VPC with an S3 gateway endpoint but no runtime endpoint
    net = network(ec2)
    ec2.create_vpc_endpoint(
        VpcId=net["vpc"], ServiceName=f"com.amazonaws.{REGION}.s3", RouteTableIds=[net["table"]]
    )
    spec = parse_spec(
        {"name": "secure", "hosting": {"vpc": {"subnets": net["subnets"], "security_groups": [net["group"]]}}}
    )
    # When the spec's network is checked
    found = check_spec_network(ec2, spec, region=REGION)
    # Then the endpoint's subnets pass, and the benchmark job (which follows hosting.vpc) lacks the runtime
    endpoint = [c.status for c in found if c.subject.startswith("hosting.vpc subnet")]
    assert endpoint == [OK, OK]
    job = [c for c in found if c.subject.startswith("hosting.vpc (benchmark job)") and c.status == FAIL]
    assert len(job) == 2 and all("SageMaker runtime" in c.detail for c in job)
