"""What a run across Regions leaves besides its primary Region's endpoint: the router and the other Regions'.

A run whose spec names several Regions (``hosting.regions``) has one inference router in the primary
Region and the same endpoint resources (endpoint, endpoint config, models) in each other Region.
Teardown deletes the router first (it sends traffic to every Region's endpoint), then each other
Region's resources with that Region's SageMaker client, by the same name prefix as the primary's
(``db-<run id>-``); labels outside the primary name their Region (``us-west-2/endpoint/db-r-a2``).
The janitor removes an expired router by its tags, as it does an endpoint.

``ListInferenceRouters`` takes no name filter (botocore's ListInferenceRoutersInput has only
MaxResults and NextToken): the run's routers are the listed ones whose name has the run's prefix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workflows.hosting import resources

INFERENCE_ROUTER = resources.ResourceKind(
    name="inference-router",
    service="sagemaker",
    found_by="name prefix db-<run id>- among ListInferenceRouters (it takes no name filter), tags for expiry",
    list_operation="list_inference_routers",
    list_key="InferenceRouters",
    name_key="InferenceRouterName",
    arn_key="InferenceRouterArn",
    delete_operation="delete_inference_router",
    describe_operation="describe_inference_router",
)
"""A run across Regions' router. Not a row of ``resources.KINDS``: only a routed run has one, so a one-Region
teardown never lists routers (moto 5.2.5 has no router API at all); the janitor sweeps them on its own."""
Regional = Callable[[str], Any]
"""A Region's SageMaker client, by Region name (the handler builds and caches them)."""


def other_regions(hosting: Any) -> list[str]:
    """The Regions of a routed spec after the primary; none for a one-Region spec."""
    regions = list(getattr(hosting, "regions", None) or [])
    return regions[1:] if len(regions) > 1 else []


def attempt_region(hosting: Any, region_index: int) -> str | None:
    """The Region an attempt deploys in where not the primary (``DeployAttempt.region_index``); None in the
    primary."""
    regions = list(getattr(hosting, "regions", None) or [])
    return regions[region_index] if 0 < region_index < len(regions) else None


def client_for(sagemaker: Any, region: str | None, regional: Regional | None) -> Any:
    """The SageMaker (or runtime) client of a deploy's Region: ``sagemaker`` in the primary, else
    ``regional``'s."""
    if region is None:
        return sagemaker
    if regional is None:
        raise ValueError(f"the endpoint is in {region}: pass that Region's client (regional)")
    return regional(region)


def delete_routers(sweep: resources.Sweep, sagemaker: Any, prefix: str, keep: Any) -> None:
    """Delete the run's routers of the client's Region."""
    resources.delete_named(sweep, sagemaker, INFERENCE_ROUTER, prefix, keep)


def delete_in_regions(
    sweep: resources.Sweep, regions: list[str], regional: Regional, prefix: str, keep: Any
) -> None:
    """Delete the run's endpoint resources in each of ``regions`` (endpoints, configs, models, in order)."""
    for region in regions:
        local = resources.Sweep()
        for kind in resources.sagemaker_kinds(teardown=True):
            if kind is not resources.INFERENCE_COMPONENT:
                resources.delete_named(local, regional(region), kind, prefix, keep)
        sweep.deleted += [f"{region}/{label}" for label in local.deleted]
        sweep.busy += [f"{region}/{label}" for label in local.busy]


def remaining_routed(
    sagemaker: Any, regions: list[str], regional: Regional, prefix: str, keep: Any
) -> list[str]:
    """What of a routed run is still there: its routers in the primary, its resources in the other Regions."""
    remaining = resources.remaining_named(sagemaker, INFERENCE_ROUTER, prefix, keep)
    for region in regions:
        for kind in resources.sagemaker_kinds(teardown=True):
            if kind is not resources.INFERENCE_COMPONENT:
                found = resources.remaining_named(regional(region), kind, prefix, keep)
                remaining += [f"{region}/{label}" for label in found]
    return remaining
