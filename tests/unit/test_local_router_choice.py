"""The local router's choice, LocalRegionFirst: its own Region's destinations while they can take the
request, then the others', each with the reason InvokeInferenceRouter names."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

from workflows.local.sagemaker.regions import signed_region
from workflows.local.sagemaker.routers import LocalRouters, Router, capacity

CAP = {
    "CrossRegionTrafficConfig": {
        "MaxInvocationsPerSecondPerInstance": 2,
        "MaxCrossRegionPercentPerEndpoint": 50,
    }
}


def arn(region: str, name: str = "ep") -> str:
    return f"arn:aws:sagemaker:{region}:123456789012:endpoint/{name}"


def backends(**statuses: str) -> dict[str, Any]:
    """One fake Region backend per keyword (region with underscores), its endpoint ``ep`` in that status."""
    found = {}
    for key, status in statuses.items():
        region = key.replace("_", "-")
        endpoint = SimpleNamespace(name="ep", status=status, config_name="ep", instances=["i-1"])
        found[region] = SimpleNamespace(
            lock=threading.RLock(), endpoints={"ep": endpoint}, configs={"ep": CAP}, region=region
        )
    return found


def router_over(regions: dict[str, Any]) -> tuple[LocalRouters, Router, list[str]]:
    routers = LocalRouters(lambda region: regions[region])
    router = Router("r", "arn:r", "us-west-2", [], None, None)  # type: ignore[arg-type]
    return routers, router, [arn(r) for r in regions]


def test_its_own_region_is_preferred_while_in_service() -> None:
    routers, router, destinations = router_over(backends(us_west_2="InService", us_east_1="InService"))
    assert routers.choose(router, destinations) == [
        (arn("us-west-2"), "local-preferred"),
        (arn("us-east-1"), "only-healthy"),
    ]


def test_a_stalled_home_sends_to_the_others_named_by_how_many_could_take_it() -> None:
    one = backends(us_west_2="Creating", us_east_1="InService", eu_west_1="Failed")
    routers, router, destinations = router_over(one)
    assert routers.choose(router, destinations) == [(arn("us-east-1"), "only-healthy")]
    two = backends(us_west_2="Creating", us_east_1="InService", eu_west_1="InService")
    routers, router, destinations = router_over(two)
    assert [reason for _, reason in routers.choose(router, destinations)] == ["capacity-available"] * 2


def test_no_destination_able_is_tried_anyway_as_failover() -> None:
    routers, router, destinations = router_over(backends(us_west_2="Creating", us_east_1="Failed"))
    assert routers.choose(router, destinations) == [(arn("us-west-2"), "failover")]


def test_a_home_at_its_capacity_overflows_to_the_other_region() -> None:
    # Given the home endpoint served its 2 requests per second per instance in the last second
    routers, router, destinations = router_over(backends(us_west_2="InService", us_east_1="InService"))
    now = time.monotonic()
    routers.record(arn("us-west-2"), now)
    routers.record(arn("us-west-2"), now)
    # Then the other Region takes the request
    assert routers.choose(router, destinations) == [(arn("us-east-1"), "only-healthy")]


def test_the_cross_region_cap_is_the_percent_of_the_instances_rate_rounded_up() -> None:
    config = {
        "CrossRegionTrafficConfig": {
            "MaxInvocationsPerSecondPerInstance": 3,
            "MaxCrossRegionPercentPerEndpoint": 50,
        }
    }
    assert capacity(config, 3, cross_region=True) == 5  # 4.5 rounded up
    assert capacity(config, 3, cross_region=False) == 9
    assert capacity({}, 3, cross_region=True) is None


def test_the_region_is_read_from_the_signed_credential_scope() -> None:
    signed = (
        "AWS4-HMAC-SHA256 Credential=testing/20261206/us-west-2/sagemaker/aws4_request, SignedHeaders=host"
    )
    assert signed_region(signed, "us-east-1") == "us-west-2"
    assert signed_region(None, "us-east-1") == "us-east-1"
