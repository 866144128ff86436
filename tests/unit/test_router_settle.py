"""The router step waits for a router to settle: gone before it is created again, InService before use."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from workflows.errors import DeployRejected, EndpointWaitTimeout
from workflows.steps.create_inference_router import ROUTER_WAIT_S, settle


class Recorded:
    """DescribeInferenceRouter answering a recorded sequence (botocore's shapes), the last one repeated."""

    def __init__(self, *answers: dict[str, Any] | ClientError) -> None:
        self.answers = list(answers)
        self.calls = 0

    def describe_inference_router(self, InferenceRouterName: str) -> dict[str, Any]:  # noqa: N803
        answer = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        if isinstance(answer, ClientError):
            raise answer
        return {"InferenceRouterName": InferenceRouterName, **answer}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


NOT_FOUND = ClientError(
    {"Error": {"Code": "ResourceNotFound", "Message": 'Could not find inference router "x".'}},
    "DescribeInferenceRouter",
)


def test_a_creating_router_is_waited_for_on_the_backoff_until_in_service() -> None:
    clock = Clock()
    router = Recorded({"Status": "Creating"}, {"Status": "Creating"}, {"Status": "InService"})
    described = settle(router, "db-r-router", sleep=clock.sleep, clock=lambda: clock.now)
    assert described is not None and described["Status"] == "InService"
    assert clock.slept == [5.0, 7.5]


def test_a_deleted_router_is_waited_for_until_describe_no_longer_finds_it() -> None:
    clock = Clock()
    router = Recorded({"Status": "Deleting"}, NOT_FOUND)
    assert settle(router, "db-r-router", gone=True, sleep=clock.sleep, clock=lambda: clock.now) is None
    assert router.calls == 2


def test_a_failed_router_is_refused_with_its_reason() -> None:
    router = Recorded({"Status": "Failed", "StatusReason": "destination is in a Region routers do not serve"})
    with pytest.raises(DeployRejected, match="Region routers do not serve"):
        settle(router, "db-r-router", sleep=lambda _: None, clock=lambda: 0.0)


def test_a_router_that_never_settles_times_out_within_the_step() -> None:
    clock = Clock()
    router = Recorded({"Status": "Creating"})
    with pytest.raises(EndpointWaitTimeout, match="still Creating"):
        settle(router, "db-r-router", sleep=clock.sleep, clock=lambda: clock.now)
    assert clock.now <= ROUTER_WAIT_S


def test_a_missing_router_when_one_must_be_in_service_is_an_error_not_a_wait() -> None:
    router = Recorded(NOT_FOUND)
    with pytest.raises(Exception, match="describe inference router"):
        settle(router, "db-r-router", sleep=lambda _: None, clock=lambda: 0.0)
    assert router.calls == 1
