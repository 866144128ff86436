"""The read-only AWS check of a spec's VPC: the subnets and security groups exist, the instances can be
spread over zones, and the subnets reach S3 and the SageMaker runtime.

Only the account knows a subnet's Availability Zone and its routes. A model in a VPC downloads its
artifact from S3 through the subnets' routes (an S3 gateway endpoint, or a NAT gateway); the benchmark
job also calls the SageMaker runtime (an interface endpoint, or a NAT gateway). Without them the
endpoint never leaves Creating and the job never starts measuring. Every call here is a Describe.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from botocore.exceptions import ClientError

from workflows.hosting.network import VpcSpec
from workflows.readiness.findings import FAIL, OK, UNVERIFIED, DoctorCheck

AREA = "network"


def _route_table_of(subnet: dict[str, Any], tables: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The subnet's route table: its explicit association, else its VPC's main table."""
    for table in tables:
        if any(a.get("SubnetId") == subnet["SubnetId"] for a in table.get("Associations", [])):
            return table
    return next(
        (
            t
            for t in tables
            if t.get("VpcId") == subnet["VpcId"] and any(a.get("Main") for a in t.get("Associations", []))
        ),
        None,
    )


def _has_nat(table: dict[str, Any] | None) -> bool:
    return table is not None and any(
        r.get("DestinationCidrBlock") == "0.0.0.0/0" and r.get("NatGatewayId")
        for r in table.get("Routes", [])
    )


def _endpoints(ec2: Any, vpc_id: str) -> list[dict[str, Any]]:
    answer = ec2.describe_vpc_endpoints(Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])
    return [e for e in answer.get("VpcEndpoints", []) if e.get("State", "available").lower() == "available"]


def reaches_s3(table: dict[str, Any] | None, endpoints: list[dict[str, Any]], region: str) -> str | None:
    """How the subnet reaches S3 (a gateway endpoint on its route table, an S3 interface endpoint, a NAT)."""
    service = f"com.amazonaws.{region}.s3"
    for endpoint in endpoints:
        if endpoint.get("ServiceName") != service:
            continue
        kind = endpoint.get("VpcEndpointType", "Gateway")
        if kind == "Interface":
            return f"interface endpoint {endpoint['VpcEndpointId']}"
        if table is not None and table["RouteTableId"] in endpoint.get("RouteTableIds", []):
            return f"gateway endpoint {endpoint['VpcEndpointId']}"
    return "a NAT gateway" if _has_nat(table) else None


def reaches_runtime(table: dict[str, Any] | None, endpoints: list[dict[str, Any]], region: str) -> str | None:
    """How the subnet reaches the SageMaker runtime (an interface endpoint with private DNS, a NAT)."""
    service = f"com.amazonaws.{region}.sagemaker.runtime"
    for endpoint in endpoints:
        if endpoint.get("ServiceName") == service and endpoint.get("VpcEndpointType") == "Interface":
            return f"interface endpoint {endpoint['VpcEndpointId']}"
    return "a NAT gateway" if _has_nat(table) else None


def _missing(ids: Iterable[str], found: Iterable[str]) -> list[str]:
    return sorted(set(ids) - set(found))


def check_vpc(
    ec2: Any, vpc: VpcSpec, *, subject: str, region: str, instance_count: int = 1, needs_runtime: bool = False
) -> list[DoctorCheck]:
    """Read-only checks of one VPC setting (``hosting.vpc`` or ``benchmark.job_vpc``).

    Args:
        subject: the spec field, e.g. ``hosting.vpc``.
        instance_count: more than one needs subnets in two zones.
        needs_runtime: the subnets must reach the SageMaker runtime (the benchmark job calls it).
    """
    try:
        subnets = ec2.describe_subnets(Filters=[{"Name": "subnet-id", "Values": vpc.subnets}])["Subnets"]
        groups = ec2.describe_security_groups(Filters=[{"Name": "group-id", "Values": vpc.security_groups}])[
            "SecurityGroups"
        ]
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        return [DoctorCheck(AREA, subject, UNVERIFIED, f"could not be read: {code} (needs ec2:Describe*)")]
    found: list[DoctorCheck] = []
    absent = _missing(vpc.subnets, (s["SubnetId"] for s in subnets)) + _missing(
        vpc.security_groups, (g["GroupId"] for g in groups)
    )
    if absent:
        found.append(
            DoctorCheck(AREA, subject, FAIL, f"{absent} do not exist in {region}; fix the ids or the region")
        )
    vpcs = sorted({s["VpcId"] for s in subnets} | {g["VpcId"] for g in groups})
    if len(vpcs) > 1:
        found.append(
            DoctorCheck(AREA, subject, FAIL, f"subnets and security groups span VPCs {vpcs}; use one VPC")
        )
    zones = sorted({s["AvailabilityZone"] for s in subnets})
    if instance_count > 1 and len(zones) < 2:
        found.append(
            DoctorCheck(
                AREA,
                f"{subject}.subnets",
                FAIL,
                f"{instance_count} instances but every subnet is in {zones}: SageMaker needs subnets in two "
                "Availability Zones; add a subnet of another zone",
            )
        )
    if not subnets:
        return found
    tables = ec2.describe_route_tables(Filters=[{"Name": "vpc-id", "Values": vpcs}])["RouteTables"]
    endpoints = [e for v in vpcs for e in _endpoints(ec2, v)]
    for subnet in subnets:
        found.extend(
            _routes(subnet, tables, endpoints, subject=subject, region=region, runtime=needs_runtime)
        )
    return found


def _routes(
    subnet: dict[str, Any],
    tables: list[dict[str, Any]],
    endpoints: list[dict[str, Any]],
    *,
    subject: str,
    region: str,
    runtime: bool,
) -> list[DoctorCheck]:
    table = _route_table_of(subnet, tables)
    name = f"{subject} {subnet['SubnetId']} ({subnet['AvailabilityZone']})"
    checks = [
        (
            "S3",
            reaches_s3(table, endpoints, region),
            "the model is downloaded from S3, so the endpoint would never leave Creating",
            f"an S3 gateway endpoint (com.amazonaws.{region}.s3) on the subnet's route table",
        )
    ]
    if runtime:
        checks.append(
            (
                "the SageMaker runtime",
                reaches_runtime(table, endpoints, region),
                "the benchmark job could not invoke the endpoint",
                f"an interface endpoint com.amazonaws.{region}.sagemaker.runtime with private DNS",
            )
        )
    found = []
    for target, route, consequence, fix in checks:
        if route:
            found.append(DoctorCheck(AREA, name, OK, f"reaches {target} through {route}"))
        else:
            found.append(
                DoctorCheck(
                    AREA, name, FAIL, f"no route to {target}: {consequence}; add {fix}, or a NAT gateway"
                )
            )
    return found


def check_spec_network(ec2: Any, spec: Any, *, region: str) -> list[DoctorCheck]:
    """The checks of a RunSpec's ``hosting.vpc`` and its benchmark job's VPC (nothing when it has none)."""
    found: list[DoctorCheck] = []
    hosting_vpc = getattr(spec.hosting, "vpc", None)
    if hosting_vpc is not None:
        count = int(getattr(spec.hosting, "instance_count", 1))
        found += check_vpc(ec2, hosting_vpc, subject="hosting.vpc", region=region, instance_count=count)
    job_vpc = spec.benchmark.job_vpc or hosting_vpc
    if job_vpc is not None:
        subject = "benchmark.job_vpc" if spec.benchmark.job_vpc else "hosting.vpc (benchmark job)"
        found += check_vpc(ec2, job_vpc, subject=subject, region=region, needs_runtime=True)
    return found
