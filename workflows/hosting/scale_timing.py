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

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from workflows.aws import aws_errors
from workflows.cli_output import (
    RESULTS_DIR,
    JsonOption,
    ProfileOption,
    RegionOption,
    aws_session,
    fail,
    guarded,
    print_json,
)


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


def observe(sagemaker: Any, *, endpoint: str, component: str, at_s: float) -> Sample:
    """One sample of the endpoint's instances and the component's copies."""
    with aws_errors(f"describe endpoint {endpoint}"):
        variants = sagemaker.describe_endpoint(EndpointName=endpoint).get("ProductionVariants") or [{}]
    with aws_errors(f"describe inference component {component}"):
        runtime = (
            sagemaker.describe_inference_component(InferenceComponentName=component).get("RuntimeConfig")
            or {}
        )
    return Sample(
        at_s=round(at_s, 3),
        instances=int(variants[0].get("CurrentInstanceCount") or 0),
        copies=int(runtime.get("CurrentCopyCount") or 0),
        desired_copies=int(runtime.get("DesiredCopyCount") or 0),
    )


def _reached(timeline: Timeline, name: str, sample: Sample, condition: bool) -> None:
    if condition and timeline.milestones.get(name) is None:
        timeline.milestones[name] = sample.at_s


def scale_in(
    sagemaker: Any,
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
    sagemaker: Any,
    invoke: Callable[[], bool],
    *,
    endpoint: str,
    component: str,
    backoff: Callable[[int], float] = lambda retry: min(10.0, 1.5 ** max(0, retry - 1)),
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


@guarded
def scale_timing(
    endpoint: Annotated[str, typer.Option(metavar="NAME", help="The scale-to-zero endpoint.")],
    component: Annotated[str, typer.Option(metavar="NAME", help="Its inference component.")],
    phase: Annotated[
        str, typer.Option(metavar="in|out|both", help="in, out, or both (in, then out).")
    ] = "both",
    poll_s: Annotated[float, typer.Option(help="Seconds between samples while scaling in.")] = 30.0,
    timeout_min: Annotated[float, typer.Option(help="Give up on a phase after this many minutes.")] = 60.0,
    out: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Where the flat JSON of figures goes (default deploybench-results/scale-timing/<endpoint>.json).",
            show_default=False,
        ),
    ] = None,
    region: RegionOption = None,
    profile: ProfileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Measure scale-in (copies, then instances, to zero) and scale-out (first request to first answer)."""
    from workflows.benchmark.payloads import Shape, payload

    if phase not in {"in", "out", "both"}:
        fail(f"--phase {phase!r} is not a phase.", fix="pass --phase in, out or both")
    session = aws_session(region, profile)
    sagemaker, runtime = session.client("sagemaker"), session.client("sagemaker-runtime")
    body = payload(Shape(1, "natural"), seed=0)

    def invoke() -> bool:
        try:
            runtime.invoke_endpoint(
                EndpointName=endpoint,
                InferenceComponentName=component,
                ContentType="application/json",
                Body=body,
            )
        except runtime.exceptions.ValidationError as error:
            # "Inference Component has no capacity to process this request" (F12): not yet scaled out.
            if "no capacity" in str(error).lower():
                return False
            raise
        return True

    figures: dict[str, Any] = {"endpoint": endpoint, "component": component}
    if phase in {"in", "both"}:
        figures.update(
            scale_in(
                sagemaker, endpoint=endpoint, component=component, poll_s=poll_s, timeout_s=timeout_min * 60
            ).figures()
        )
    if phase in {"out", "both"}:
        figures.update(
            scale_out(
                sagemaker, invoke, endpoint=endpoint, component=component, timeout_s=timeout_min * 60
            ).figures()
        )
    target = out or RESULTS_DIR / "scale-timing" / f"{endpoint}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print_json(figures)
