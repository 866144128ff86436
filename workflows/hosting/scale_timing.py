"""Scale to zero, measured: how long copies and instances take to go, and to come back (F13, F12).

No AWS view shows copy and instance counts together: this polls DescribeEndpoint (the variant's
CurrentInstanceCount) and DescribeInferenceComponent (CurrentCopyCount) side by side. Scale-in is
two stages in the field: traffic stop -> copies 0 in ~13 min (target tracking's AlarmLow needs 90
datapoints of 10 s), copies 0 -> instances 0 ~13 min more, billed until then. Scale-out starts
with requests failing at once ("no capacity", F12) until the step-scaling alarm adds a copy: the
field waited 471 s and 95 retries.

``deploybench scale-timing --endpoint E --component C`` runs it and writes one flat JSON object.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workflows.aws.clients import aws_errors
from workflows.benchmark.policy import policy_for

# The benchmark client's schedule for scale to zero, so the measurement retries as a benchmark does.
SCALE_OUT_BACKOFF = policy_for("scale-to-zero").backoff

if TYPE_CHECKING:
    from types_boto3_sagemaker import SageMakerClient


@dataclass(frozen=True)
class Sample:
    at_s: float
    instances: int
    copies: int
    desired_copies: int


@dataclass
class Timeline:
    """What one phase saw: every sample, and when each milestone was first reached (seconds)."""

    phase: str
    samples: list[Sample] = field(default_factory=list)
    milestones: dict[str, float | None] = field(default_factory=dict)
    requests: int = 0
    retries: int = 0
    timed_out: bool = False

    def figures(self) -> dict[str, Any]:
        """One flat mapping: the milestones, the request counts, how many samples."""
        out: dict[str, Any] = {f"{self.phase}_{k}_s": v for k, v in self.milestones.items()}
        out.update(
            {
                f"{self.phase}_samples": len(self.samples),
                f"{self.phase}_timed_out": self.timed_out,
            }
        )
        if self.phase == "scale_out":
            out.update(scale_out_requests=self.requests, scale_out_retries=self.retries)
        return out


def observe(sagemaker: SageMakerClient, *, endpoint: str, component: str, at_s: float) -> Sample:
    """One sample of the endpoint's instances and the component's copies."""
    with aws_errors(f"describe endpoint {endpoint}"):
        variants = sagemaker.describe_endpoint(EndpointName=endpoint).get("ProductionVariants") or []
    with aws_errors(f"describe inference component {component}"):
        runtime = (
            sagemaker.describe_inference_component(InferenceComponentName=component).get("RuntimeConfig")
            or {}
        )
    return Sample(
        at_s=round(at_s, 3),
        instances=int((variants[0].get("CurrentInstanceCount") if variants else 0) or 0),
        copies=int(runtime.get("CurrentCopyCount") or 0),
        desired_copies=int(runtime.get("DesiredCopyCount") or 0),
    )


def _reached(timeline: Timeline, name: str, sample: Sample, condition: bool) -> None:
    if condition and timeline.milestones.get(name) is None:
        timeline.milestones[name] = sample.at_s


def scale_in(
    sagemaker: SageMakerClient,
    *,
    endpoint: str,
    component: str,
    poll_s: float = 30.0,
    timeout_s: float = 3600.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Timeline:
    """From now (traffic stopped) until copies and then instances are zero, or ``timeout_s``."""
    timeline = Timeline("scale_in", milestones={"copies_zero": None, "instances_zero": None})
    started = clock()
    while True:
        sample = observe(sagemaker, endpoint=endpoint, component=component, at_s=clock() - started)
        timeline.samples.append(sample)
        _reached(timeline, "copies_zero", sample, sample.copies == 0)
        _reached(timeline, "instances_zero", sample, sample.copies == 0 and sample.instances == 0)
        if timeline.milestones["instances_zero"] is not None:
            return timeline
        if sample.at_s >= timeout_s:
            timeline.timed_out = True
            return timeline
        sleep(poll_s)


def scale_out(
    sagemaker: SageMakerClient,
    invoke: Callable[[], bool],
    *,
    endpoint: str,
    component: str,
    backoff: Callable[[int], float] = SCALE_OUT_BACKOFF.delay_s,
    timeout_s: float = 1800.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Timeline:
    """Send requests (``invoke`` returns True once answered) with backoff, sampling between them,
    until one is answered, or ``timeout_s``: the first request is what triggers the scale-out."""
    timeline = Timeline(
        "scale_out", milestones={"instances_back": None, "copies_back": None, "first_success": None}
    )
    started = clock()
    while True:
        answered = invoke()
        timeline.requests += 1
        sample = observe(sagemaker, endpoint=endpoint, component=component, at_s=clock() - started)
        timeline.samples.append(sample)
        _reached(timeline, "instances_back", sample, sample.instances > 0)
        _reached(timeline, "copies_back", sample, sample.copies > 0)
        _reached(timeline, "first_success", sample, answered)
        if answered:
            return timeline
        if sample.at_s >= timeout_s:
            timeline.timed_out = True
            return timeline
        timeline.retries += 1
        sleep(backoff(timeline.retries))
