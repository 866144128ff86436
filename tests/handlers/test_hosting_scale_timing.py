"""Scale-to-zero timing (F13, F12): the exact describe calls, the milestones, the deadlines.

SageMaker is stubbed (moto has no inference components); the clock is a counter the sleeps advance,
so the phases run instantly and every poll has a deadline.
"""

from __future__ import annotations

from typing import Any

from tests.support.hosting import NOW, stubbed
from workflows.hosting.scale_timing import scale_in, scale_out

ENDPOINT, IC = "db-run-1-a1", "db-run-1-a1-ic0"
ARN = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/db-run-1-a1"


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def expect_sample(stub: Any, *, instances: int, copies: int, desired: int) -> None:
    variant = {"VariantName": "primary", "CurrentInstanceCount": instances}
    stub.add_response(
        "describe_endpoint",
        {"EndpointName": ENDPOINT, "EndpointArn": ARN, "EndpointConfigName": ENDPOINT, "EndpointStatus": "InService",
         "CreationTime": NOW, "LastModifiedTime": NOW, "ProductionVariants": [variant]},
        {"EndpointName": ENDPOINT},
    )  # fmt: skip
    stub.add_response(
        "describe_inference_component",
        {"InferenceComponentName": IC, "InferenceComponentArn": ARN, "EndpointName": ENDPOINT, "EndpointArn": ARN,
         "InferenceComponentStatus": "InService", "CreationTime": NOW, "LastModifiedTime": NOW,
         "RuntimeConfig": {"DesiredCopyCount": desired, "CurrentCopyCount": copies}},
        {"InferenceComponentName": IC},
    )  # fmt: skip


def test_scale_in_times_copies_then_instances_reaching_zero() -> None:
    time = FakeTime()
    with stubbed("sagemaker") as (sagemaker, stub):
        # Given copies going 1 -> 0 at the third poll and instances 1 -> 0 at the fifth
        for instances, copies in [(1, 1), (1, 1), (1, 0), (1, 0), (0, 0)]:
            expect_sample(stub, instances=instances, copies=copies, desired=copies)
        # When scale-in is observed every 30 s
        timeline = scale_in(sagemaker, endpoint=ENDPOINT, component=IC, poll_s=30, timeout_s=600,
                            clock=time.clock, sleep=time.sleep)  # fmt: skip
    # Then each milestone is the first sample that showed it, and polling stopped there
    assert timeline.milestones == {"copies_zero": 60.0, "instances_zero": 120.0}
    assert timeline.figures() == {
        "scale_in_copies_zero_s": 60.0,
        "scale_in_instances_zero_s": 120.0,
        "scale_in_samples": 5,
        "scale_in_timed_out": False,
    }
    assert time.slept == [30, 30, 30, 30]


def test_scale_in_gives_up_at_its_deadline() -> None:
    time = FakeTime()
    with stubbed("sagemaker") as (sagemaker, stub):
        # Given a component that never scales in
        for _ in range(3):
            expect_sample(stub, instances=1, copies=1, desired=1)
        # When the deadline is 60 s
        timeline = scale_in(sagemaker, endpoint=ENDPOINT, component=IC, poll_s=30, timeout_s=60,
                            clock=time.clock, sleep=time.sleep)  # fmt: skip
    # Then it stops at the deadline and says so
    assert timeline.timed_out and timeline.milestones == {"copies_zero": None, "instances_zero": None}


def test_scale_out_retries_no_capacity_with_backoff_until_the_first_answer() -> None:
    time = FakeTime()
    answers = iter([False, False, False, True])  # "no capacity" three times (F12), then an answer
    with stubbed("sagemaker") as (sagemaker, stub):
        # Given an instance that comes back after the second request and a copy after the third
        for instances, copies in [(0, 0), (1, 0), (1, 1), (1, 1)]:
            expect_sample(stub, instances=instances, copies=copies, desired=1)
        # When scale-out is driven by requests
        timeline = scale_out(sagemaker, lambda: next(answers), endpoint=ENDPOINT, component=IC,
                             backoff=lambda retry: 2.0 * retry, timeout_s=600,
                             clock=time.clock, sleep=time.sleep)  # fmt: skip
    # Then it counted 4 requests, 3 retries with growing backoff, and the milestones in order
    assert (timeline.requests, timeline.retries) == (4, 3)
    assert time.slept == [2.0, 4.0, 6.0]
    assert timeline.milestones == {"instances_back": 2.0, "copies_back": 6.0, "first_success": 12.0}
    assert timeline.figures()["scale_out_retries"] == 3


def test_scale_out_gives_up_at_its_deadline() -> None:
    time = FakeTime()
    with stubbed("sagemaker") as (sagemaker, stub):
        for _ in range(2):
            expect_sample(stub, instances=0, copies=0, desired=0)
        timeline = scale_out(sagemaker, lambda: False, endpoint=ENDPOINT, component=IC,
                             backoff=lambda retry: 50.0, timeout_s=40,
                             clock=time.clock, sleep=time.sleep)  # fmt: skip
    assert timeline.timed_out and timeline.milestones["first_success"] is None
    assert timeline.requests == 2
