"""What CreateInferenceRouter leaves in the execution state: the run's router and its destinations.

A run across Regions (``hosting.regions``) moves to the next Region when its primary Region has no
capacity left (F06 after the last instance type). Once that Region's endpoint is InService, one router
in the primary Region routes over the run's endpoint in every Region tried so far, local first: the
stalled primary endpoint serves again through the same router the day it gets instances.
"""

from __future__ import annotations

from pydantic import Field

from workflows.models import Contract


class RouterDestination(Contract):
    """One endpoint the router's routing target lists."""

    region: str
    endpoint_name: str
    arn: str
    status: str = Field(description="The endpoint's EndpointStatus when the router was created.")


class RouterResult(Contract):
    """The run's inference router, in the primary Region."""

    name: str
    arn: str
    region: str = Field(description="The primary Region, the router's home.")
    routing_target: str = Field(description="The RoutingTargetName InvokeInferenceRouter names.")
    destinations: list[RouterDestination]
