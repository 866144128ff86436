"""Regions after pools: the same endpoint in more than one Region, behind an inference router.

A spec may list Regions (``hosting.regions``, the first primary). Each Region's endpoint config caps
what routers of other Regions may send it (``CrossRegionTrafficConfig``), and one router in the
primary Region has one routing target whose destinations are the endpoints of every Region; by
default it serves from its own Region first (``LocalRegionFirst``). The requests here are built in
botocore's shapes (botocore 1.44 has CreateInferenceRouter in ``sagemaker``). A run deploys in the next
Region when the one before has no capacity left (F06 past the last instance type,
``workflows.remediation.changes.next_region``), then routes (``workflows.steps.create_inference_router``).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from workflows.models import Strict

REGION_PATTERN = r"^[a-z]{2}(-[a-z]+)+-\d$"
LOCAL_REGION_FIRST = "LocalRegionFirst"
ROUTING_TARGET = "main"
"""The one routing target: the run's model (callers name it as RoutingTargetName)."""


class CrossRegionTraffic(Strict):
    """``CrossRegionTrafficConfig`` of each Region's endpoint config: what other Regions' routers may send.

    The cap is max_percent of max_invocations_per_instance times the endpoint's InService instances,
    rounded up; direct requests are not counted, and a routed request over it is throttled.
    """

    max_invocations_per_instance: int = Field(
        ge=1,
        le=10_000,
        description="MaxInvocationsPerSecondPerInstance: the requests per second one instance serves "
        "(the benchmark's req/s at the concurrency you plan for).",
    )
    max_percent: int = Field(
        100,
        ge=1,
        le=100,
        description="MaxCrossRegionPercentPerEndpoint: the share of that capacity other Regions' routers may use.",
    )


class RegionSettings(Strict):
    """``hosting.regions``: where the endpoint is deployed, the first Region primary (its router's home)."""

    regions: list[str] = Field(
        default_factory=list,
        max_length=10,
        description="Regions to deploy the same artifact in, the first primary; empty or one: the run's "
        "Region only. With two or more, a stall past the last instance type (F06) deploys the same artifact in "
        "the next Region (an opt-in spend), and a router in the first serves from it. "
        "A router routing target holds at most 10 destinations (botocore's DestinationList).",
    )
    cross_region: CrossRegionTraffic | None = Field(
        None,
        description="CrossRegionTrafficConfig of every Region's endpoint config; required with two Regions or more.",
    )

    @model_validator(mode="after")
    def _regions(self) -> RegionSettings:
        import re

        bad = [r for r in self.regions if not re.fullmatch(REGION_PATTERN, r)]
        if bad:
            raise ValueError(f"regions {bad} are not AWS Region names (such as us-west-2)")
        if len(set(self.regions)) != len(self.regions):
            raise ValueError(f"regions {self.regions} name a Region twice; each Region holds one endpoint")
        if len(self.regions) > 1 and self.cross_region is None:
            raise ValueError(
                "two Regions or more need cross_region.max_invocations_per_instance (the requests per second "
                "one instance serves), which caps what other Regions' routers send each endpoint"
            )
        return self

    @property
    def routed(self) -> bool:
        return len(self.regions) > 1


def cross_region_traffic_config(settings: RegionSettings) -> dict[str, Any]:
    """The endpoint config's ``CrossRegionTrafficConfig``; none for a one-Region run."""
    if not settings.routed or settings.cross_region is None:
        return {}
    return {
        "CrossRegionTrafficConfig": {
            "MaxInvocationsPerSecondPerInstance": settings.cross_region.max_invocations_per_instance,
            "MaxCrossRegionPercentPerEndpoint": settings.cross_region.max_percent,
        }
    }


def endpoint_arn(region: str, account: str, endpoint: str, partition: str = "aws") -> str:
    return f"arn:{partition}:sagemaker:{region}:{account}:endpoint/{endpoint}"


def create_router_request(
    name: str, *, destinations: list[str], tags: list[dict[str, str]]
) -> dict[str, Any]:
    """CreateInferenceRouter's parameters: one routing target over every Region's endpoint, local first."""
    return {
        "InferenceRouterName": name,
        "RoutingTargets": [
            {
                "Name": ROUTING_TARGET,
                "Destinations": [{"ResourceArn": arn} for arn in destinations],
                "RoutingPreference": LOCAL_REGION_FIRST,
            }
        ],
        "Tags": tags,
    }
