"""``deploybench scale-timing``: scale to zero measured on a live endpoint (``workflows/hosting/scale_timing.py``).

Kept out of ``workflows/hosting``: the preflight registry imports every module there inside the
Preflight function, whose bundle has no CLI packages (typer).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from workflows.cli.options import JsonOption, ProfileOption, RegionOption
from workflows.cli.output import RESULTS_DIR, aws_session, fail, guarded, print_json
from workflows.hosting.scale_timing import scale_in, scale_out


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
