"""The routed shape's figures: what the router adds to direct InvokeEndpoint, and who served why."""

from __future__ import annotations

import itertools

from workflows.benchmark.routed import routed_figures, router_call, shares
from workflows.benchmark.routed_calls import RoutedCall, measure_routed

EAST = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/db-r1-a1"
WEST = "arn:aws:sagemaker:us-west-2:123456789012:endpoint/db-r1-a2"


def test_the_added_latency_is_the_routed_percentile_minus_the_direct_one_with_a_conservative_interval() -> (
    None
):
    # Given 300 direct calls of 10..12.99 ms and 300 routed ones exactly 2 ms slower, all served in the west
    direct = [10 + (i % 300) / 100 for i in range(300)]
    routed = [RoutedCall(ms + 2, WEST, "only-healthy") for ms in direct]
    # When the figures are made
    figures = routed_figures(
        router="arn:r", destinations=[EAST, WEST], direct_endpoint=WEST, direct_ms=direct, routed=routed
    )
    # Then the router adds 2 ms at p50 and p99, with n on each side
    assert (figures.direct.n, figures.routed.n) == (300, 300)
    assert figures.added_p50_ms == 2.0 and figures.added_p99_ms == 2.0
    # And the difference's interval holds the difference and is no narrower than either side's
    low, high = figures.added_p50_ci_ms
    assert low is not None and high is not None and low <= 2.0 <= high
    side = figures.routed.p50_ci_ms
    assert high - low >= side[1] - side[0]  # type: ignore[operator]
    # And the p99 interval exists at 300 samples (the fewest that bound p99 from above are 299)
    assert None not in figures.added_p99_ci_ms
    assert [(s.destination, s.region, s.share, s.reasons) for s in figures.shares] == [
        (WEST, "us-west-2", 1.0, {"only-healthy": 300})
    ]


def test_shares_count_each_destination_and_its_reasons_most_served_first() -> None:
    calls = [RoutedCall(1, EAST, "local-preferred")] * 2 + [RoutedCall(1, WEST, "only-healthy")] * 5
    calls += [RoutedCall(1, WEST, "failover")]
    assert [(s.destination, s.requests, s.share, s.reasons) for s in shares(calls)] == [
        (WEST, 6, 0.75, {"only-healthy": 5, "failover": 1}),
        (EAST, 2, 0.25, {"local-preferred": 2}),
    ]


def test_too_few_samples_leave_the_p99_interval_open_rather_than_invented() -> None:
    figures = routed_figures(
        router="arn:r", destinations=[WEST], direct_endpoint=WEST, direct_ms=[1.0, 2.0, 3.0],
        routed=[RoutedCall(2.0, WEST, "local-preferred")] * 3,
    )  # fmt: skip
    assert figures.added_p99_ci_ms[1] is None


def test_measuring_alternates_the_order_and_makes_one_call_each_way_per_round() -> None:
    order: list[str] = []
    counter = itertools.count()

    def routed() -> tuple[str, str]:
        order.append("routed")
        return (EAST if next(counter) % 2 else WEST), "capacity-available"

    direct_ms, calls = measure_routed(lambda: order.append("direct"), routed, rounds=4)
    assert order == ["direct", "routed", "routed", "direct", "direct", "routed", "routed", "direct"]
    assert len(direct_ms) == len(calls) == 4
    assert {c.destination for c in calls} == {EAST, WEST}


def test_a_router_call_answers_the_serving_latency_or_the_routers_error_code_without_raising() -> None:
    import io

    import botocore.session
    from botocore.stub import Stubber

    # Given a router runtime client that answers once, then refuses with a throttle
    client = botocore.session.get_session().create_client(
        "sagemaker-inference-router-runtime",
        region_name="us-east-1",
        aws_access_key_id="k",
        aws_secret_access_key="s",
    )
    stub = Stubber(client)
    expected = {
        "InferenceRouterName": "db-r1-router",
        "RoutingTargetName": "main",
        "Body": b"{}",
        "ContentType": "application/json",
    }
    stub.add_response(
        "invoke_inference_router",
        {"Body": io.BytesIO(b"[]"), "InvokedRoutedResourceArn": WEST, "RoutingReason": "only-healthy"},
        expected,
    )
    stub.add_client_error(
        "invoke_inference_router", "ThrottlingException", "slow down", 429, expected_params=expected
    )
    call = router_call(client, "db-r1-router", "main")
    # When it is called twice as the warm-up loop calls an endpoint
    with stub:
        served, throttled = call(b"{}"), call(b"{}")
    # Then the first is a success with its latency, the second an error outcome naming the router's code
    assert served.error is None and served.latency_ms >= 0
    assert (throttled.error, throttled.message) == ("ThrottlingException", "slow down")
